/* A recursive-descent parser for the JSON subset of tuning files
 * (tuning_json.h). Depth is bounded so that a hostile file cannot exhaust
 * the stack. */
#include "coll/tuning_json.h"

#include <errno.h>
#include <stdarg.h>

#define JSON_MAX_DEPTH 32

typedef struct {
    const char *p;
    int line, col;
    char *err;
    size_t errlen;
    bool failed;
} jp_t;

static void jp_fail(jp_t *j, const char *fmt, ...) HALO_PRINTF(2, 3);
static void jp_fail(jp_t *j, const char *fmt, ...)
{
    if (j->failed)
        return;
    j->failed = true;
    int n = snprintf(j->err, j->errlen, "%d:%d: ", j->line, j->col);
    if (n < 0 || (size_t)n >= j->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->err + n, j->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static void jp_next(jp_t *j)
{
    if (*j->p == '\n') {
        j->line++;
        j->col = 1;
    } else {
        j->col++;
    }
    j->p++;
}

static void jp_space(jp_t *j)
{
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
        jp_next(j);
}

static bool jp_word(jp_t *j, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(j->p, w, n) != 0)
        return false;
    for (size_t i = 0; i < n; i++)
        jp_next(j);
    return true;
}

static char *jp_string(jp_t *j)
{
    /* At the opening quote. */
    jp_next(j);
    size_t cap = 16, len = 0;
    char *s = halo_malloc(cap);
    for (;;) {
        char ch = *j->p;
        if (ch == '\0' || ch == '\n') {
            jp_fail(j, "unterminated string");
            free(s);
            return NULL;
        }
        if ((unsigned char)ch < 0x20) {
            jp_fail(j, "control character in a string");
            free(s);
            return NULL;
        }
        jp_next(j);
        if (ch == '"')
            break;
        if (ch == '\\') {
            char e = *j->p;
            if (e == '\0') {
                jp_fail(j, "unterminated string");
                free(s);
                return NULL;
            }
            jp_next(j);
            switch (e) {
            case '"': ch = '"'; break;
            case '\\': ch = '\\'; break;
            case '/': ch = '/'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                unsigned v = 0;
                for (int i = 0; i < 4; i++) {
                    char h = *j->p;
                    int d = h >= '0' && h <= '9' ? h - '0'
                          : h >= 'a' && h <= 'f' ? h - 'a' + 10
                          : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                    if (d < 0) {
                        jp_fail(j, "bad \\u escape");
                        free(s);
                        return NULL;
                    }
                    v = v * 16 + (unsigned)d;
                    jp_next(j);
                }
                if (v == 0 || v >= 0x80) {
                    jp_fail(j, "\\u escapes are limited to ASCII characters here");
                    free(s);
                    return NULL;
                }
                ch = (char)v;
                break;
            }
            default:
                jp_fail(j, "bad escape \\%c", e ? e : '0');
                free(s);
                return NULL;
            }
        }
        if (len + 2 > cap) {
            cap *= 2;
            s = halo_realloc(s, cap);
        }
        s[len++] = ch;
    }
    s[len] = '\0';
    return s;
}

static bool jp_value(jp_t *j, halo_json_t *v, int depth);
static void json_release(halo_json_t *v);

static bool jp_members(jp_t *j, halo_json_t *v, int depth, bool object)
{
    char close = object ? '}' : ']';
    int cap = 0;
    jp_next(j);   /* the opening bracket */
    jp_space(j);
    if (*j->p == close) {
        jp_next(j);
        return true;
    }
    for (;;) {
        if (v->n == cap) {
            cap = cap ? 2 * cap : 4;
            v->items = halo_realloc(v->items, (size_t)cap * sizeof *v->items);
            if (object)
                v->keys = halo_realloc(v->keys, (size_t)cap * sizeof *v->keys);
        }
        jp_space(j);
        if (object) {
            if (*j->p != '"') {
                jp_fail(j, "expected a key (a string)");
                return false;
            }
            char *k = jp_string(j);
            if (!k)
                return false;
            v->keys[v->n] = k;
            jp_space(j);
            if (*j->p != ':') {
                free(k);
                v->keys[v->n] = NULL;
                jp_fail(j, "expected ':' after a key");
                return false;
            }
            jp_next(j);
        }
        memset(&v->items[v->n], 0, sizeof v->items[v->n]);
        if (!jp_value(j, &v->items[v->n], depth + 1)) {
            /* The failed member holds only its complete parts. */
            if (object)
                free(v->keys[v->n]);
            json_release(&v->items[v->n]);
            return false;
        }
        v->n++;
        jp_space(j);
        if (*j->p == ',') {
            jp_next(j);
            continue;
        }
        if (*j->p == close) {
            jp_next(j);
            return true;
        }
        jp_fail(j, "expected ',' or '%c'", close);
        return false;
    }
}

static bool jp_value(jp_t *j, halo_json_t *v, int depth)
{
    jp_space(j);
    v->line = j->line;
    v->col = j->col;
    if (depth > JSON_MAX_DEPTH) {
        jp_fail(j, "nested too deeply");
        return false;
    }
    char ch = *j->p;
    if (ch == '{' || ch == '[') {
        v->type = ch == '{' ? HALO_JSON_OBJECT : HALO_JSON_ARRAY;
        return jp_members(j, v, depth, ch == '{');
    }
    if (ch == '"') {
        v->type = HALO_JSON_STRING;
        v->str = jp_string(j);
        return v->str != NULL;
    }
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
        const char *start = j->p;
        if (*j->p == '-')
            jp_next(j);
        if (!(*j->p >= '0' && *j->p <= '9')) {
            jp_fail(j, "bad number");
            return false;
        }
        while (*j->p >= '0' && *j->p <= '9')
            jp_next(j);
        if (*j->p == '.' || *j->p == 'e' || *j->p == 'E') {
            jp_fail(j, "numbers must be integers");
            return false;
        }
        errno = 0;
        long long x = strtoll(start, NULL, 10);
        if (errno) {
            jp_fail(j, "number out of range");
            return false;
        }
        v->type = HALO_JSON_INT;
        v->num = x;
        return true;
    }
    if (jp_word(j, "true")) {
        v->type = HALO_JSON_BOOL;
        v->num = 1;
        return true;
    }
    if (jp_word(j, "false")) {
        v->type = HALO_JSON_BOOL;
        return true;
    }
    if (jp_word(j, "null")) {
        v->type = HALO_JSON_NULL;
        return true;
    }
    if (ch == '\0')
        jp_fail(j, "unexpected end of input");
    else
        jp_fail(j, "unexpected character '%c'", ch);
    return false;
}

static void json_release(halo_json_t *v)
{
    if (v->type == HALO_JSON_STRING)
        free(v->str);
    if (v->type == HALO_JSON_ARRAY || v->type == HALO_JSON_OBJECT) {
        for (int i = 0; i < v->n; i++) {
            json_release(&v->items[i]);
            if (v->keys)
                free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    }
}

void halo_json_free(halo_json_t *v)
{
    if (!v)
        return;
    json_release(v);
    free(v);
}

halo_json_t *halo_json_parse(const char *text, char *err, size_t errlen)
{
    jp_t j = {.p = text, .line = 1, .col = 1, .err = err, .errlen = errlen};
    halo_json_t *v = halo_calloc(1, sizeof *v);
    if (err && errlen)
        err[0] = '\0';
    if (jp_value(&j, v, 0)) {
        jp_space(&j);
        if (*j.p != '\0')
            jp_fail(&j, "text after the end of the value");
    }
    if (j.failed) {
        halo_json_free(v);
        return NULL;
    }
    return v;
}

const char *halo_json_type_name(halo_json_type_t t)
{
    switch (t) {
    case HALO_JSON_NULL: return "null";
    case HALO_JSON_BOOL: return "a boolean";
    case HALO_JSON_INT: return "an integer";
    case HALO_JSON_STRING: return "a string";
    case HALO_JSON_ARRAY: return "an array";
    case HALO_JSON_OBJECT: return "an object";
    }
    return "?";
}
