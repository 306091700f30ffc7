/* Error codes, classes and messages.
 *
 * Code space (all non-negative ints):
 *   0..62          predefined classes (the code of a plain error is its class)
 *   1001..1018     MPI_T error classes
 *   2048..16383    codes raised by Halo with a formatted message:
 *                  2048 + slot * 64 + class, slot in a ring of 224 messages,
 *                  so the class survives even when the message is overwritten
 *   16384..        classes and codes added by the user (Add_error_class/code),
 *                  above MPI_ERR_LASTCODE as the standard asks. */
#ifndef HALO_CORE_ERRORS_H
#define HALO_CORE_ERRORS_H

#include "core/halo.h"

#define HALO_ERR_RING_BASE 2048
#define HALO_ERR_USER_BASE (MPI_ERR_LASTCODE + 1)

/* Raise an error of a predefined class with a message. By convention the
 * message starts with "(arg=value): " or ": " so that the binding layer can
 * put the function name in front: "MPI_Send(count=-1): count must be ...". */
int halo_err(int errclass, const char *fmt, ...) HALO_PRINTF(2, 3);

/* Class of any code (MPI_ERR_UNKNOWN for codes that were never issued). */
int halo_err_class_of(int code);
/* Is this a code the library knows (predefined, ring or user-added)? */
bool halo_err_code_valid(int code);
/* Records the outermost MPI function of an error (first caller wins). */
void halo_err_set_fname(int code, const char *fname);
/* Full message of a code into buf (at most MPI_MAX_ERROR_STRING bytes). */
void halo_err_string(int code, char *buf, int *len_p);

int halo_err_add_class(int *class_p);
int halo_err_add_code(int errclass, int *code_p);
int halo_err_add_string(int code, const char *str);
int halo_err_remove_class(int errclass);
int halo_err_remove_code(int code);
int halo_err_remove_string(int code);
int halo_err_last_used(void);

#endif
