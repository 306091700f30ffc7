/* The JSON subset of collective tuning files (src/coll/tuning_json.c):
 * what it accepts, what it refuses, and where it says the error is. */
#include "coll/tuning_json.h"
#include "unit.h"

static halo_json_t *ok(const char *text)
{
    char err[200];
    halo_json_t *v = halo_json_parse(text, err, sizeof err);
    if (!v)
        fprintf(stderr, "unexpected error: %s\n  in: %s\n", err, text);
    UCHECK(v != NULL);
    return v;
}

/* Must fail, with an error starting "line:col:". */
static void bad(const char *text, const char *where)
{
    char err[200];
    halo_json_t *v = halo_json_parse(text, err, sizeof err);
    UCHECK(v == NULL);
    if (strncmp(err, where, strlen(where)) != 0) {
        fprintf(stderr, "FAIL: error \"%s\" does not start with \"%s\" (input %s)\n", err, where, text);
        unit_failures++;
    }
    halo_json_free(v);
}

int main(void)
{
    halo_json_t *v = ok(" {\n \"a\" : [1, -22, 3000000000],\"b\":{\"c\":\"x\\\"y\\\\z\\n\\u0041\"},\n"
                        " \"t\": true, \"f\": false, \"n\": null, \"e\": [], \"o\": {}}\n");
    if (v) {
        UCHECK(v->type == HALO_JSON_OBJECT);
        UCHECK_EQ(v->n, 7);
        UCHECK(!strcmp(v->keys[0], "a") && v->items[0].type == HALO_JSON_ARRAY);
        UCHECK_EQ(v->items[0].n, 3);
        UCHECK_EQ(v->items[0].items[1].num, -22);
        UCHECK_EQ(v->items[0].items[2].num, 3000000000LL);
        UCHECK_EQ(v->items[0].line, 2);
        const halo_json_t *b = &v->items[1];
        UCHECK(b->type == HALO_JSON_OBJECT && b->n == 1 && !strcmp(b->keys[0], "c"));
        UCHECK(b->items[0].type == HALO_JSON_STRING && !strcmp(b->items[0].str, "x\"y\\z\nA"));
        UCHECK(v->items[2].type == HALO_JSON_BOOL && v->items[2].num == 1);
        UCHECK(v->items[3].type == HALO_JSON_BOOL && v->items[3].num == 0);
        UCHECK(v->items[4].type == HALO_JSON_NULL);
        UCHECK(v->items[5].type == HALO_JSON_ARRAY && v->items[5].n == 0);
        UCHECK(v->items[6].type == HALO_JSON_OBJECT && v->items[6].n == 0);
        UCHECK_EQ(v->items[6].line, 3);
    }
    halo_json_free(v);
    halo_json_free(ok("42"));
    halo_json_free(ok("\"just a string\""));

    bad("", "1:1:");
    bad("{\"a\": [1, 2,]}", "1:13:");
    bad("{\"a\": 1,}", "1:9:");
    bad("{\"a\" 1}", "1:6:");
    bad("{\n  \"a\": 1.5\n}", "2:9:");
    bad("[1e3]", "1:3:");
    bad("[\"open]", "1:8:");
    bad("[\"a\\qb\"]", "1:6:");
    bad("[\"\\u00e9\"]", "1:");
    bad("[\"tab\there\"]", "1:6:");
    bad("[tru]", "1:2:");
    bad("{} {}", "1:4:");
    bad("[99999999999999999999]", "1:");
    bad("{1: 2}", "1:2:");
    /* Deep nesting is refused, not a stack overflow. */
    char deep[200];
    memset(deep, '[', 100);
    deep[100] = '\0';
    bad(deep, "1:");
    UNIT_DONE();
}
