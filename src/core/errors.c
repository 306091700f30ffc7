/* Error codes, classes and their strings (layout of the code space in
 * errors.h), and the MPI functions that query and extend them. */
#include "core/errors.h"

#include <stdarg.h>

#include "binding/api_gen.h"

#define RING_SLOTS 224
#define RING_TEXT 400
#define FNAME_LEN 48

typedef struct ring_slot {
    char fname[FNAME_LEN];
    char text[RING_TEXT];
} ring_slot_t;

static ring_slot_t ring[RING_SLOTS];
static _Atomic unsigned ring_next;

/* User-added classes and codes: code - HALO_ERR_USER_BASE indexes this table. */
typedef struct user_code {
    int errclass;     /* for a class: itself */
    int is_class;
    int live;
    int ncodes;       /* for a class: live codes of it */
    char *text;       /* NULL: no string */
} user_code_t;

/* Removed entries are reused (lowest first), so adding and removing in a
 * loop keeps the table small. */
static user_code_t *user_codes;
static int user_count, user_cap;

static const char *class_text(int c)
{
    switch (c) {
    case MPI_SUCCESS: return "MPI_SUCCESS: no error";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER: invalid buffer pointer";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG: return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM: return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK: return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST: invalid request";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP: return "MPI_ERR_OP: invalid operation";
    case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY: invalid topology";
    case MPI_ERR_DIMS: return "MPI_ERR_DIMS: invalid dimension argument";
    case MPI_ERR_ARG: return "MPI_ERR_ARG: invalid argument";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE: message truncated on receive";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER: known error not in this list";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN: internal MPI error";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS: error code is in status";
    case MPI_ERR_ACCESS: return "MPI_ERR_ACCESS: permission denied";
    case MPI_ERR_AMODE: return "MPI_ERR_AMODE: invalid file access mode";
    case MPI_ERR_ASSERT: return "MPI_ERR_ASSERT: invalid assertion";
    case MPI_ERR_BAD_FILE: return "MPI_ERR_BAD_FILE: invalid file name";
    case MPI_ERR_BASE: return "MPI_ERR_BASE: invalid base address";
    case MPI_ERR_CONVERSION: return "MPI_ERR_CONVERSION: data conversion failed";
    case MPI_ERR_DISP: return "MPI_ERR_DISP: invalid displacement";
    case MPI_ERR_DUP_DATAREP: return "MPI_ERR_DUP_DATAREP: data representation already defined";
    case MPI_ERR_FILE_EXISTS: return "MPI_ERR_FILE_EXISTS: file exists";
    case MPI_ERR_FILE_IN_USE: return "MPI_ERR_FILE_IN_USE: file in use";
    case MPI_ERR_FILE: return "MPI_ERR_FILE: invalid file handle";
    case MPI_ERR_INFO_KEY: return "MPI_ERR_INFO_KEY: info key too long";
    case MPI_ERR_INFO_NOKEY: return "MPI_ERR_INFO_NOKEY: info key not defined";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE: info value too long";
    case MPI_ERR_INFO: return "MPI_ERR_INFO: invalid info object";
    case MPI_ERR_IO: return "MPI_ERR_IO: I/O error";
    case MPI_ERR_KEYVAL: return "MPI_ERR_KEYVAL: invalid attribute key";
    case MPI_ERR_LOCKTYPE: return "MPI_ERR_LOCKTYPE: invalid lock type";
    case MPI_ERR_NAME: return "MPI_ERR_NAME: service name not published";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_NOT_SAME: return "MPI_ERR_NOT_SAME: arguments differ between processes";
    case MPI_ERR_NO_SPACE: return "MPI_ERR_NO_SPACE: out of space";
    case MPI_ERR_NO_SUCH_FILE: return "MPI_ERR_NO_SUCH_FILE: no such file";
    case MPI_ERR_PORT: return "MPI_ERR_PORT: invalid port name";
    case MPI_ERR_QUOTA: return "MPI_ERR_QUOTA: quota exceeded";
    case MPI_ERR_READ_ONLY: return "MPI_ERR_READ_ONLY: read-only file or file system";
    case MPI_ERR_RMA_ATTACH: return "MPI_ERR_RMA_ATTACH: memory cannot be attached";
    case MPI_ERR_RMA_CONFLICT: return "MPI_ERR_RMA_CONFLICT: conflicting accesses to window";
    case MPI_ERR_RMA_RANGE: return "MPI_ERR_RMA_RANGE: target memory outside the window";
    case MPI_ERR_RMA_SHARED: return "MPI_ERR_RMA_SHARED: memory cannot be shared";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls";
    case MPI_ERR_SERVICE: return "MPI_ERR_SERVICE: invalid service name";
    case MPI_ERR_SIZE: return "MPI_ERR_SIZE: invalid size";
    case MPI_ERR_SPAWN: return "MPI_ERR_SPAWN: error spawning processes";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported";
    case MPI_ERR_WIN: return "MPI_ERR_WIN: invalid window";
    case MPI_ERR_RMA_FLAVOR: return "MPI_ERR_RMA_FLAVOR: wrong window flavor";
    case MPI_ERR_PROC_ABORTED: return "MPI_ERR_PROC_ABORTED: a peer process aborted";
    case MPI_ERR_VALUE_TOO_LARGE: return "MPI_ERR_VALUE_TOO_LARGE: value too large to store";
    case MPI_ERR_SESSION: return "MPI_ERR_SESSION: invalid session";
    case MPI_ERR_ERRHANDLER: return "MPI_ERR_ERRHANDLER: invalid error handler";
    case MPI_ERR_ABI: return "MPI_ERR_ABI: ABI mismatch";
    case MPI_T_ERR_CANNOT_INIT: return "MPI_T_ERR_CANNOT_INIT: tools interface cannot be initialized";
    case MPI_T_ERR_NOT_ACCESSIBLE: return "MPI_T_ERR_NOT_ACCESSIBLE: not accessible";
    case MPI_T_ERR_NOT_INITIALIZED: return "MPI_T_ERR_NOT_INITIALIZED: tools interface not initialized";
    case MPI_T_ERR_NOT_SUPPORTED: return "MPI_T_ERR_NOT_SUPPORTED: not supported";
    case MPI_T_ERR_MEMORY: return "MPI_T_ERR_MEMORY: out of memory";
    case MPI_T_ERR_INVALID: return "MPI_T_ERR_INVALID: invalid use";
    case MPI_T_ERR_INVALID_INDEX: return "MPI_T_ERR_INVALID_INDEX: invalid index";
    case MPI_T_ERR_INVALID_ITEM: return "MPI_T_ERR_INVALID_ITEM: invalid item";
    case MPI_T_ERR_INVALID_SESSION: return "MPI_T_ERR_INVALID_SESSION: invalid session";
    case MPI_T_ERR_INVALID_HANDLE: return "MPI_T_ERR_INVALID_HANDLE: invalid handle";
    case MPI_T_ERR_INVALID_NAME: return "MPI_T_ERR_INVALID_NAME: invalid name";
    case MPI_T_ERR_OUT_OF_HANDLES: return "MPI_T_ERR_OUT_OF_HANDLES: out of handles";
    case MPI_T_ERR_OUT_OF_SESSIONS: return "MPI_T_ERR_OUT_OF_SESSIONS: out of sessions";
    case MPI_T_ERR_CVAR_SET_NOT_NOW: return "MPI_T_ERR_CVAR_SET_NOT_NOW: variable cannot be set now";
    case MPI_T_ERR_CVAR_SET_NEVER: return "MPI_T_ERR_CVAR_SET_NEVER: variable can never be set";
    case MPI_T_ERR_PVAR_NO_WRITE: return "MPI_T_ERR_PVAR_NO_WRITE: variable cannot be written";
    case MPI_T_ERR_PVAR_NO_STARTSTOP: return "MPI_T_ERR_PVAR_NO_STARTSTOP: variable cannot be started or stopped";
    case MPI_T_ERR_PVAR_NO_ATOMIC: return "MPI_T_ERR_PVAR_NO_ATOMIC: variable cannot be read and reset atomically";
    case MPI_ERR_LASTCODE: return "MPI_ERR_LASTCODE: last error code";
    default: return NULL;
    }
}

static bool is_predefined_class(int c)
{
    return (c >= 0 && c <= MPI_ERR_ABI) || (c >= MPI_T_ERR_CANNOT_INIT && c <= MPI_T_ERR_PVAR_NO_ATOMIC) ||
           c == MPI_ERR_LASTCODE;
}

int halo_err(int errclass, const char *fmt, ...)
{
    if (errclass <= 0 || errclass >= 64)
        return errclass;
    unsigned slot = atomic_fetch_add_explicit(&ring_next, 1, memory_order_relaxed) % RING_SLOTS;
    ring_slot_t *r = &ring[slot];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->text, sizeof r->text, fmt, ap);
    va_end(ap);
    r->fname[0] = '\0';
    return HALO_ERR_RING_BASE + (int)slot * 64 + errclass;
}

static user_code_t *user_entry(int code)
{
    int i = code - HALO_ERR_USER_BASE;
    if (i < 0 || i >= user_count || !user_codes[i].live)
        return NULL;
    return &user_codes[i];
}

int halo_err_class_of(int code)
{
    if (is_predefined_class(code))
        return code;
    if (code >= HALO_ERR_RING_BASE && code < MPI_ERR_LASTCODE)
        return (code - HALO_ERR_RING_BASE) % 64;
    user_code_t *u = user_entry(code);
    if (u)
        return u->errclass;
    return MPI_ERR_UNKNOWN;
}

bool halo_err_code_valid(int code)
{
    if (is_predefined_class(code) || code == MPI_ERR_LASTCODE)
        return true;
    if (code >= HALO_ERR_RING_BASE && code < MPI_ERR_LASTCODE)
        return is_predefined_class((code - HALO_ERR_RING_BASE) % 64);
    return user_entry(code) != NULL;
}

void halo_err_set_fname(int code, const char *fname)
{
    if (code < HALO_ERR_RING_BASE || code >= MPI_ERR_LASTCODE)
        return;
    ring_slot_t *r = &ring[(code - HALO_ERR_RING_BASE) / 64];
    if (r->fname[0] == '\0')
        snprintf(r->fname, sizeof r->fname, "%s", fname);
}

void halo_err_string(int code, char *buf, int *len_p)
{
    const char *t;
    if (code >= HALO_ERR_RING_BASE && code < MPI_ERR_LASTCODE) {
        ring_slot_t *r = &ring[(code - HALO_ERR_RING_BASE) / 64];
        const char *cls = class_text((code - HALO_ERR_RING_BASE) % 64);
        snprintf(buf, MPI_MAX_ERROR_STRING, "%s%s [%s]", r->fname, r->text,
                 cls ? cls : "unknown class");
    } else if ((t = class_text(code)) != NULL) {
        snprintf(buf, MPI_MAX_ERROR_STRING, "%s", t);
    } else {
        user_code_t *u = user_entry(code);
        if (u)
            snprintf(buf, MPI_MAX_ERROR_STRING, "%s", u->text ? u->text : "");
        else
            snprintf(buf, MPI_MAX_ERROR_STRING, "unknown error code %d", code);
    }
    if (len_p)
        *len_p = (int)strlen(buf);
}

static int user_new(int errclass, int is_class)
{
    int i = 0;
    while (i < user_count && user_codes[i].live)
        i++;
    if (i == user_count) {
        if (user_count == user_cap) {
            user_cap = user_cap ? 2 * user_cap : 16;
            user_codes = halo_realloc(user_codes, (size_t)user_cap * sizeof *user_codes);
        }
        user_count++;
    }
    int code = HALO_ERR_USER_BASE + i;
    user_codes[i] = (user_code_t){
        .errclass = is_class ? code : errclass, .is_class = is_class, .live = 1, .text = NULL};
    if (!is_class) {
        user_code_t *c = user_entry(errclass);
        if (c)
            c->ncodes++;
    }
    return code;
}

int halo_err_add_class(int *class_p)
{
    *class_p = user_new(0, 1);
    return MPI_SUCCESS;
}

int halo_err_add_code(int errclass, int *code_p)
{
    user_code_t *u = user_entry(errclass);
    if (!is_predefined_class(errclass) && !(u && u->is_class))
        return halo_err(MPI_ERR_ARG, "(errorclass=%d): not an error class", errclass);
    *code_p = user_new(errclass, 0);
    return MPI_SUCCESS;
}

int halo_err_add_string(int code, const char *str)
{
    user_code_t *u = user_entry(code);
    if (!u)
        return halo_err(MPI_ERR_ARG, "(errorcode=%d): only codes and classes added with "
                        "MPI_Add_error_class/code take a string", code);
    if (strlen(str) >= MPI_MAX_ERROR_STRING)
        return halo_err(MPI_ERR_ARG, ": string longer than MPI_MAX_ERROR_STRING-1 (%zu bytes)", strlen(str));
    free(u->text);
    u->text = halo_strdup(str);
    return MPI_SUCCESS;
}

int halo_err_remove_string(int code)
{
    user_code_t *u = user_entry(code);
    if (!u || !u->text)
        return halo_err(MPI_ERR_ARG, "(errorcode=%d): no user-added string to remove", code);
    free(u->text);
    u->text = NULL;
    return MPI_SUCCESS;
}

int halo_err_remove_code(int code)
{
    user_code_t *u = user_entry(code);
    if (!u || u->is_class)
        return halo_err(MPI_ERR_ARG, "(errorcode=%d): not a user-added error code", code);
    if (u->text)
        return halo_err(MPI_ERR_ARG, "(errorcode=%d): remove its string first", code);
    user_code_t *c = user_entry(u->errclass);
    if (c)
        c->ncodes--;
    u->live = 0;
    return MPI_SUCCESS;
}

int halo_err_remove_class(int errclass)
{
    user_code_t *u = user_entry(errclass);
    if (!u || !u->is_class)
        return halo_err(MPI_ERR_ARG, "(errorclass=%d): not a user-added error class", errclass);
    if (u->text)
        return halo_err(MPI_ERR_ARG, "(errorclass=%d): remove its string first", errclass);
    if (u->ncodes > 0)
        return halo_err(MPI_ERR_ARG, "(errorclass=%d): %d error code(s) still use it", errclass, u->ncodes);
    u->live = 0;
    return MPI_SUCCESS;
}

int halo_err_last_used(void)
{
    int last = MPI_ERR_LASTCODE;
    for (int i = 0; i < user_count; i++)
        if (user_codes[i].live)
            last = HALO_ERR_USER_BASE + i;
    return last;
}

/* ---------------------------------------------------------------- MPI API */

int halo_api_error_class(int errorcode, int *errorclass)
{
    if (!halo_err_code_valid(errorcode))
        return halo_err(MPI_ERR_ARG, "(errorcode=%d): not a valid error code", errorcode);
    *errorclass = halo_err_class_of(errorcode);
    return MPI_SUCCESS;
}

int halo_api_error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen)
        return halo_err(MPI_ERR_ARG, ": string and resultlen must not be NULL");
    halo_err_string(errorcode, string, resultlen);
    return MPI_SUCCESS;
}

int halo_api_add_error_class(int *errorclass) { return halo_err_add_class(errorclass); }
int halo_api_add_error_code(int errorclass, int *errorcode) { return halo_err_add_code(errorclass, errorcode); }
int halo_api_add_error_string(int errorcode, const char *string)
{
    if (!string)
        return halo_err(MPI_ERR_ARG, "(string=NULL): a string is required");
    return halo_err_add_string(errorcode, string);
}
int halo_api_remove_error_class(int errorclass) { return halo_err_remove_class(errorclass); }
int halo_api_remove_error_code(int errorcode) { return halo_err_remove_code(errorcode); }
int halo_api_remove_error_string(int errorcode) { return halo_err_remove_string(errorcode); }
