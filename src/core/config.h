/* Configuration variables: every HALO_* knob is declared once, next to the
 * code that reads it, with its type, default and one line of help. The
 * declarations land in one linker section, which feeds `halo_info --all`
 * (and later the MPI_T control variables). */
#ifndef HALO_CORE_CONFIG_H
#define HALO_CORE_CONFIG_H

#include "core/halo.h"

typedef enum { HALO_CFG_T_INT, HALO_CFG_T_STR } halo_cfg_type_t;

typedef struct halo_cfg {
    const char *name;
    halo_cfg_type_t type;
    long dflt;
    const char *dflt_str;
    const char *help;
    int read;            /* value below holds the environment's setting */
    long value;
    const char *str;
} halo_cfg_t;

#define HALO_CFG_INT(var, name, dflt, help)                                                   \
    static halo_cfg_t var = {name, HALO_CFG_T_INT, dflt, NULL, help, 0, 0, NULL};           \
    static halo_cfg_t *const var##_entry __attribute__((section("halo_cfg"), used)) = &var

#define HALO_CFG_STR(var, name, dflt, help)                                                   \
    static halo_cfg_t var = {name, HALO_CFG_T_STR, 0, dflt, help, 0, 0, NULL};              \
    static halo_cfg_t *const var##_entry __attribute__((section("halo_cfg"), used)) = &var

/* Value of an integer variable (environment, else default); read once. */
long halo_cfg_get(halo_cfg_t *v);
/* Value of a string variable. */
const char *halo_cfg_get_str(halo_cfg_t *v);

/* Iteration over every declared variable (halo_info). */
halo_cfg_t *const *halo_cfg_begin(void);
halo_cfg_t *const *halo_cfg_end(void);

#endif
