/* Unit test of the PMI-1 wire code (src/pmi/pmi_wire.c) and halo_shm_name:
 * parsing, formatting, escaping, chunked values and the process mapping.
 * No launcher involved. Prints each failed check; exits 1 if any failed. */
#include "pmi.h"
#include "pmi_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);           \
            test_failures++;                                                                   \
        }                                                                                      \
    } while (0)

#define CHECK_STR(got, want)                                                                   \
    do {                                                                                       \
        const char *got_ = (got), *want_ = (want);                                             \
        if (got_ == NULL || strcmp(got_, want_) != 0) {                                        \
            fprintf(stderr, "%s:%d: %s is '%s', expected '%s'\n", __FILE__, __LINE__, #got,    \
                    got_ != NULL ? got_ : "(null)", want_);                                    \
            test_failures++;                                                                   \
        }                                                                                      \
    } while (0)

static int test_parse_str(const char *line, halo_pmi_wire_msg_t *msg)
{
    return halo_pmi_wire_parse(line, strlen(line), msg);
}

static void test_parse_well_formed(void)
{
    halo_pmi_wire_msg_t msg;
    int v = 0;

    CHECK(test_parse_str("cmd=put kvsname=kvs_1 key=a value=b=c\n", &msg) == 0);
    CHECK(msg.npairs == 4);
    CHECK(halo_pmi_wire_msg_is(&msg, "put"));
    CHECK(!halo_pmi_wire_msg_is(&msg, "get"));
    CHECK_STR(halo_pmi_wire_msg_get(&msg, "kvsname"), "kvs_1");
    /* A value splits at the first '=' only (Hydra stores "b=c"). */
    CHECK_STR(halo_pmi_wire_msg_get(&msg, "value"), "b=c");
    CHECK(halo_pmi_wire_msg_get(&msg, "missing") == NULL);

    /* Without the newline, with extra spaces, with an empty value. */
    CHECK(test_parse_str("cmd=get_result  rc=-1 msg=x value= ", &msg) == 0);
    CHECK(msg.npairs == 4);
    CHECK(halo_pmi_wire_msg_get_int(&msg, "rc", &v) == 0 && v == -1);
    CHECK_STR(halo_pmi_wire_msg_get(&msg, "value"), "");

    /* Hydra's replies, as captured from mpiexec.hydra 4.0.2. */
    CHECK(test_parse_str("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n", &msg) ==
          0);
    CHECK(halo_pmi_wire_msg_get_int(&msg, "vallen_max", &v) == 0 && v == 1024);
    CHECK(test_parse_str("cmd=get_result rc=0 msg=success value=(vector,(0,1,1))\n", &msg) ==
          0);
    CHECK_STR(halo_pmi_wire_msg_get(&msg, "value"), "(vector,(0,1,1))");

    /* Only the given length counts: the rest of the buffer is the next line. */
    CHECK(halo_pmi_wire_parse("cmd=barrier_out\ncmd=junk", 16, &msg) == 0);
    CHECK(msg.npairs == 1 && halo_pmi_wire_msg_is(&msg, "barrier_out"));
}

static void test_parse_malformed(void)
{
    static const char *const bad[] = {
        "",
        "\n",
        "put key=a",            /* no cmd= */
        "key=a cmd=put",        /* cmd not first */
        "cmd=",                 /* empty command */
        "cmd=put =b",           /* empty key */
        "cmd=put key",          /* pair without '=' */
        "cmd=put ke-y=a",       /* bad key character */
        "cmd=put key=a\tb",     /* control character */
        "cmd=put key=a\rb",
        "cmd=put key=a\x7f",
        "mcmd=spawn",
    };
    halo_pmi_wire_msg_t msg;
    char line[HALO_PMI_WIRE_LINE_MAX + 16];
    int v;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (test_parse_str(bad[i], &msg) == 0) {
            fprintf(stderr, "malformed line %zu '%s' was accepted\n", i, bad[i]);
            test_failures++;
        }
    }
    /* An embedded NUL is not a terminator the protocol knows. */
    CHECK(halo_pmi_wire_parse("cmd=put\0 key=a", 14, &msg) != 0);

    /* Too long. */
    memset(line, 'x', sizeof(line));
    memcpy(line, "cmd=put value=", 14);
    CHECK(halo_pmi_wire_parse(line, HALO_PMI_WIRE_LINE_MAX, &msg) != 0);
    CHECK(halo_pmi_wire_parse(line, HALO_PMI_WIRE_LINE_MAX - 1, &msg) == 0);

    /* Too many pairs. */
    strcpy(line, "cmd=x");
    for (int i = 0; i < HALO_PMI_WIRE_PAIRS_MAX; i++) {
        strcat(line, " k=v");
    }
    CHECK(test_parse_str(line, &msg) != 0);

    /* Numbers. */
    CHECK(test_parse_str("cmd=x a=12 b=1x c= d=99999999999 e=-7", &msg) == 0);
    CHECK(halo_pmi_wire_msg_get_int(&msg, "a", &v) == 0 && v == 12);
    CHECK(halo_pmi_wire_msg_get_int(&msg, "b", &v) != 0);
    CHECK(halo_pmi_wire_msg_get_int(&msg, "c", &v) != 0);
    CHECK(halo_pmi_wire_msg_get_int(&msg, "d", &v) != 0);
    CHECK(halo_pmi_wire_msg_get_int(&msg, "e", &v) == 0 && v == -7);
    CHECK(halo_pmi_wire_msg_get_int(&msg, "f", &v) != 0);
}

static void test_format(void)
{
    halo_pmi_wire_line_t line;
    halo_pmi_wire_msg_t msg;
    char big[HALO_PMI_WIRE_LINE_MAX];

    halo_pmi_wire_line_begin(&line, "put");
    halo_pmi_wire_line_add(&line, "key", "a");
    halo_pmi_wire_line_add(&line, "value", "b=c");
    halo_pmi_wire_line_add_int(&line, "n", -42);
    CHECK(halo_pmi_wire_line_end(&line) == (int)strlen("cmd=put key=a value=b=c n=-42\n"));
    CHECK_STR(line.buf, "cmd=put key=a value=b=c n=-42\n");

    /* What we format, we parse back. */
    CHECK(halo_pmi_wire_parse(line.buf, line.len, &msg) == 0);
    CHECK(msg.npairs == 4);
    CHECK_STR(halo_pmi_wire_msg_get(&msg, "value"), "b=c");

    /* Values and keys that would not survive the wire are refused. */
    halo_pmi_wire_line_begin(&line, "put");
    halo_pmi_wire_line_add(&line, "value", "a b");
    CHECK(halo_pmi_wire_line_end(&line) < 0);
    halo_pmi_wire_line_begin(&line, "put");
    halo_pmi_wire_line_add(&line, "value", "a\nb");
    CHECK(halo_pmi_wire_line_end(&line) < 0);
    halo_pmi_wire_line_begin(&line, "put");
    halo_pmi_wire_line_add(&line, "ke=y", "a");
    CHECK(halo_pmi_wire_line_end(&line) < 0);
    halo_pmi_wire_line_begin(&line, "a b");
    CHECK(halo_pmi_wire_line_end(&line) < 0);

    /* Overflow is refused, not truncated. */
    memset(big, 'v', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    halo_pmi_wire_line_begin(&line, "put");
    halo_pmi_wire_line_add(&line, "value", big);
    CHECK(halo_pmi_wire_line_end(&line) < 0);
    /* The longest line that fits: LINE_MAX bytes with its newline. */
    big[HALO_PMI_WIRE_LINE_MAX - 1 - strlen("cmd=put value=")] = '\0';
    halo_pmi_wire_line_begin(&line, "put");
    halo_pmi_wire_line_add(&line, "value", big);
    CHECK(halo_pmi_wire_line_end(&line) == HALO_PMI_WIRE_LINE_MAX);
    CHECK(halo_pmi_wire_parse(line.buf, line.len, &msg) == 0);
}

static void test_escape(void)
{
    char in[300], enc[1000], dec[300];
    long n;

    /* The safe set passes unchanged: hex and paths cost nothing. */
    CHECK(halo_pmi_wire_encode(enc, sizeof(enc), "0123abcDEF-_./:,()+@") == 20);
    CHECK_STR(enc, "0123abcDEF-_./:,()+@");

    CHECK(halo_pmi_wire_encode(enc, sizeof(enc), "a b=c%\n") == 15);
    CHECK_STR(enc, "a%20b%3Dc%25%0A");
    CHECK(halo_pmi_wire_encoded_len("a b=c%\n") == 15);
    CHECK(halo_pmi_wire_decode(dec, sizeof(dec), enc) == 7);
    CHECK_STR(dec, "a b=c%\n");
    CHECK(halo_pmi_wire_decode(dec, sizeof(dec), "%3d%3D") == 2);
    CHECK_STR(dec, "==");

    /* Every byte value round-trips, and the encoding is a valid wire value
     * that can never be mistaken for a chunk header or chunk key. */
    for (int i = 0; i < 255; i++) {
        in[i] = (char)(i + 1);
    }
    in[255] = '\0';
    n = halo_pmi_wire_encode(enc, sizeof(enc), in);
    CHECK(n > 255 && (size_t)n == halo_pmi_wire_encoded_len(in));
    CHECK(halo_pmi_wire_value_is_valid(enc));
    CHECK(strstr(enc, HALO_PMI_WIRE_CHUNK_MARK) == NULL);
    CHECK(halo_pmi_wire_decode(dec, sizeof(dec), enc) == 255);
    CHECK(memcmp(dec, in, 256) == 0);

    /* Room: exactly enough works, one byte less fails. */
    CHECK(halo_pmi_wire_encode(enc, 4, "a b") == -1);
    CHECK(halo_pmi_wire_encode(enc, 6, "a b") == 5);
    CHECK(halo_pmi_wire_encode(enc, 1, "") == 0);
    CHECK(halo_pmi_wire_decode(dec, 3, "a%20b") == -1);
    CHECK(halo_pmi_wire_decode(dec, 4, "a%20b") == 3);

    /* Broken escapes. */
    CHECK(halo_pmi_wire_decode(dec, sizeof(dec), "%") == -1);
    CHECK(halo_pmi_wire_decode(dec, sizeof(dec), "ab%4") == -1);
    CHECK(halo_pmi_wire_decode(dec, sizeof(dec), "%zz") == -1);
    CHECK(halo_pmi_wire_decode(dec, sizeof(dec), "%00") == -1);
    CHECK(halo_pmi_wire_decode(dec, sizeof(dec), "%!2:10") == -1);
}

static void test_chunks(void)
{
    char header[64], key[128], *value, *enc, *joined, *dec;
    const size_t chunk_max = 1023, len = 5000;
    size_t total = 0, enc_len, joined_len = 0;
    int nchunks = 0;

    CHECK(halo_pmi_wire_chunk_header_format(header, sizeof(header), 3, 2500) > 0);
    CHECK_STR(header, "%!3:2500");
    CHECK(halo_pmi_wire_chunk_header_parse(header, &nchunks, &total) == 1);
    CHECK(nchunks == 3 && total == 2500);
    CHECK(halo_pmi_wire_chunk_header_format(header, 4, 3, 2500) == -1);
    CHECK(halo_pmi_wire_chunk_header_format(header, sizeof(header), 0, 10) == -1);

    /* Ordinary values are not headers, broken headers are errors. */
    CHECK(halo_pmi_wire_chunk_header_parse("abc%20", &nchunks, &total) == 0);
    CHECK(halo_pmi_wire_chunk_header_parse("", &nchunks, &total) == 0);
    CHECK(halo_pmi_wire_chunk_header_parse("%!", &nchunks, &total) == -1);
    CHECK(halo_pmi_wire_chunk_header_parse("%!0:5", &nchunks, &total) == -1);
    CHECK(halo_pmi_wire_chunk_header_parse("%!3:", &nchunks, &total) == -1);
    CHECK(halo_pmi_wire_chunk_header_parse("%!3:2", &nchunks, &total) == -1);
    CHECK(halo_pmi_wire_chunk_header_parse("%!3:10x", &nchunks, &total) == -1);
    CHECK(halo_pmi_wire_chunk_header_parse("%!x:10", &nchunks, &total) == -1);
    CHECK(halo_pmi_wire_chunk_header_parse("%!99999999999:10", &nchunks, &total) == -1);

    CHECK(halo_pmi_wire_chunk_key(key, sizeof(key), "k%20x", 3) == 8);
    CHECK_STR(key, "k%20x%!3");
    CHECK(halo_pmi_wire_chunk_key(key, 8, "k%20x", 3) == -1);
    CHECK(halo_pmi_wire_chunk_key(key, sizeof(key), "k", -1) == -1);

    CHECK(halo_pmi_wire_chunk_count(2500, 1023) == 3);
    CHECK(halo_pmi_wire_chunk_count(1023, 1023) == 1);
    CHECK(halo_pmi_wire_chunk_count(1024, 1023) == 2);
    CHECK(halo_pmi_wire_chunk_count(0, 1023) == 1);

    /* Split and reassemble a long value the way the client does: encode,
     * cut into chunk_max pieces, join, decode. */
    value = malloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        value[i] = (char)(' ' + (i * 31) % 95);
    }
    value[len] = '\0';
    enc_len = halo_pmi_wire_encoded_len(value);
    enc = malloc(enc_len + 1);
    joined = malloc(enc_len + 1);
    dec = malloc(enc_len + 1);
    CHECK(halo_pmi_wire_encode(enc, enc_len + 1, value) == (long)enc_len);
    nchunks = halo_pmi_wire_chunk_count(enc_len, chunk_max);
    CHECK(nchunks == (int)((enc_len + chunk_max - 1) / chunk_max));
    for (int i = 0; i < nchunks; i++) {
        size_t off = (size_t)i * chunk_max;
        size_t n = enc_len - off < chunk_max ? enc_len - off : chunk_max;

        CHECK(n > 0 && n <= chunk_max);
        memcpy(joined + joined_len, enc + off, n);
        joined_len += n;
    }
    joined[joined_len] = '\0';
    CHECK(joined_len == enc_len);
    CHECK(halo_pmi_wire_decode(dec, enc_len + 1, joined) == (long)len);
    CHECK(strcmp(dec, value) == 0);
    free(value);
    free(enc);
    free(joined);
    free(dec);
}

static void test_mapping_parse_one(const char *value, int size, const int *want, int want_nnodes)
{
    int nodes[64], nnodes = -1;

    if (halo_pmi_wire_mapping_parse(value, size, nodes, &nnodes) != 0) {
        fprintf(stderr, "mapping '%s' (size %d) was rejected\n", value, size);
        test_failures++;
        return;
    }
    if (nnodes != want_nnodes || memcmp(nodes, want, sizeof(int) * (size_t)size) != 0) {
        fprintf(stderr, "mapping '%s' (size %d) parsed wrong (nnodes %d)\n", value, size,
                nnodes);
        test_failures++;
    }
}

static void test_mapping(void)
{
    static const char *const bad[] = {
        "", "(vector)", "(vector,(0,0,1))", "(vector,(0,1,0))", "(vector,(0,1,1)",
        "(vector,(0,1,1)))", "(vector,(-1,1,1))", "(vector,(0,1))", "vector,(0,1,1)",
        "(vector,(0,1,1),)", "(vector,(0, 1,1))", "(vector,(2147483647,2,1))",
    };
    static const int all0[4] = {0, 0, 0, 0};
    static const int cyclic[4] = {0, 1, 0, 1};
    static const int blocks[5] = {0, 0, 1, 1, 2};
    static const int layouts[][6] = {
        {0, 0, 0, 0, 0, 0}, {0, 0, 1, 1, 2, 2}, {0, 1, 0, 1, 0, 1},
        {0, 0, 0, 1, 1, 2}, {3, 3, 0, 0, 1, 1}, {0, 1, 2, 3, 4, 5},
    };
    int nodes[8], nnodes;
    char out[256];

    test_mapping_parse_one("(vector,(0,1,4))", 4, all0, 1);
    /* Hydra's answer for 2 ranks on one host: the block repeats. */
    test_mapping_parse_one("(vector,(0,1,1))", 2, all0, 1);
    test_mapping_parse_one("(vector,(0,2,1))", 4, cyclic, 2);
    test_mapping_parse_one("(vector,(0,2,2),(2,1,1))", 5, blocks, 3);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (halo_pmi_wire_mapping_parse(bad[i], 4, nodes, &nnodes) == 0) {
            fprintf(stderr, "malformed mapping '%s' was accepted\n", bad[i]);
            test_failures++;
        }
    }

    CHECK(halo_pmi_wire_mapping_format(out, sizeof(out), all0, 4) > 0);
    CHECK_STR(out, "(vector,(0,1,4))");
    CHECK(halo_pmi_wire_mapping_format(out, sizeof(out), layouts[1], 6) > 0);
    CHECK_STR(out, "(vector,(0,3,2))");
    CHECK(halo_pmi_wire_mapping_format(out, sizeof(out), layouts[3], 6) > 0);
    CHECK_STR(out, "(vector,(0,1,3),(1,1,2),(2,1,1))");
    CHECK(halo_pmi_wire_mapping_format(out, 16, all0, 4) == -1);
    CHECK(halo_pmi_wire_mapping_format(out, 17, all0, 4) == 16);
    CHECK(halo_pmi_wire_mapping_format(out, sizeof(out), all0, 0) == -1);

    /* Whatever the server formats, the client parses back to the same. */
    for (size_t k = 0; k < sizeof(layouts) / sizeof(layouts[0]); k++) {
        int maxnode = 0;

        for (int i = 0; i < 6; i++) {
            maxnode = layouts[k][i] > maxnode ? layouts[k][i] : maxnode;
        }
        CHECK(halo_pmi_wire_mapping_format(out, sizeof(out), layouts[k], 6) > 0);
        test_mapping_parse_one(out, 6, layouts[k], maxnode + 1);
    }
}

static void test_shm_name(void)
{
    char name[64];

    halo_shm_name(name, sizeof(name), "kvs_12_ab", "seg0");
    CHECK_STR(name, "/" HALO_SHM_PREFIX "kvs_12_ab-seg0");
    halo_shm_name(name, sizeof(name), "kvs_12_ab", "");
    CHECK_STR(name, "/halo-kvs_12_ab-");
    halo_shm_name(name, sizeof(name), "a/b", "c/d");
    CHECK_STR(name, "/halo-a_b-c_d");
    halo_shm_name(name, 8, "kvs_12_ab", "seg0");
    CHECK_STR(name, "/halo-k");
}

int main(void)
{
    test_parse_well_formed();
    test_parse_malformed();
    test_format();
    test_escape();
    test_chunks();
    test_mapping();
    test_shm_name();
    if (test_failures != 0) {
        fprintf(stderr, "test_pmi_wire: %d check(s) failed\n", test_failures);
        return 1;
    }
    printf("test_pmi_wire: all checks passed\n");
    return 0;
}
