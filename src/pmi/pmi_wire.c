/* The PMI-1 wire protocol: parsing, formatting, escaping and the chunk
 * naming of long values. Pure functions, no I/O, no state: used by the
 * client library and by mpiexec alike. */
#include "pmi_wire.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pmi_wire_key_char_is_valid(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* Printable and not a space: what a value may hold on the wire. Bytes of
 * 0x80 and above pass, since servers store values as opaque strings. */
static int pmi_wire_value_char_is_valid(unsigned char c)
{
    return c > ' ' && c != 0x7f;
}

/* The bytes the encoder lets through unchanged: letters, digits and
 * punctuation that no PMI implementation we know treats specially. Hex
 * strings and paths, the usual payloads, therefore cost nothing. */
static int pmi_wire_char_is_safe(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        return 1;
    }
    return c != '\0' && strchr("-_.,:/()+@[]{}~^*!", c) != NULL;
}

static int pmi_wire_hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

int halo_pmi_wire_value_is_valid(const char *value)
{
    for (const unsigned char *p = (const unsigned char *)value; *p != '\0'; p++) {
        if (!pmi_wire_value_char_is_valid(*p)) {
            return 0;
        }
    }
    return 1;
}

int halo_pmi_wire_parse(const char *line, size_t len, halo_pmi_wire_msg_t *msg_p)
{
    char *p, *end;

    msg_p->npairs = 0;
    if (len > 0 && line[len - 1] == '\n') {
        len--;
    }
    if (len == 0 || len >= sizeof(msg_p->buf)) {
        return -1;
    }
    memcpy(msg_p->buf, line, len);
    msg_p->buf[len] = '\0';

    p = msg_p->buf;
    end = msg_p->buf + len;
    while (p < end) {
        char *key, *eq;

        if (*p == ' ') {
            p++;
            continue;
        }
        if (msg_p->npairs == HALO_PMI_WIRE_PAIRS_MAX) {
            return -1;
        }
        key = p;
        while (p < end && pmi_wire_key_char_is_valid((unsigned char)*p)) {
            p++;
        }
        if (p == key || p == end || *p != '=') {
            return -1;
        }
        eq = p++;
        while (p < end && *p != ' ') {
            if (!pmi_wire_value_char_is_valid((unsigned char)*p)) {
                return -1;
            }
            p++;
        }
        *eq = '\0';
        msg_p->pairs[msg_p->npairs].key = key;
        msg_p->pairs[msg_p->npairs].value = eq + 1;
        msg_p->npairs++;
        if (p < end) {
            *p++ = '\0'; /* the separating space ends the value */
        }
    }

    if (msg_p->npairs == 0 || strcmp(msg_p->pairs[0].key, "cmd") != 0 ||
        msg_p->pairs[0].value[0] == '\0') {
        msg_p->npairs = 0;
        return -1;
    }
    return 0;
}

const char *halo_pmi_wire_msg_get(const halo_pmi_wire_msg_t *msg, const char *key)
{
    for (int i = 0; i < msg->npairs; i++) {
        if (strcmp(msg->pairs[i].key, key) == 0) {
            return msg->pairs[i].value;
        }
    }
    return NULL;
}

int halo_pmi_wire_msg_get_int(const halo_pmi_wire_msg_t *msg, const char *key, int *value_p)
{
    const char *s = halo_pmi_wire_msg_get(msg, key);
    char *endp;
    long v;

    if (s == NULL || *s == '\0') {
        return -1;
    }
    v = strtol(s, &endp, 10);
    if (*endp != '\0' || v < INT_MIN || v > INT_MAX) {
        return -1;
    }
    *value_p = (int)v;
    return 0;
}

int halo_pmi_wire_msg_is(const halo_pmi_wire_msg_t *msg, const char *cmd)
{
    return msg->npairs > 0 && strcmp(msg->pairs[0].value, cmd) == 0;
}

static void pmi_wire_line_append(halo_pmi_wire_line_t *line, const char *s, size_t n)
{
    /* One byte stays free for the newline that line_end adds. */
    if (line->failed || line->len + n + 1 > HALO_PMI_WIRE_LINE_MAX) {
        line->failed = 1;
        return;
    }
    memcpy(line->buf + line->len, s, n);
    line->len += n;
    line->buf[line->len] = '\0';
}

void halo_pmi_wire_line_begin(halo_pmi_wire_line_t *line, const char *cmd)
{
    line->len = 0;
    line->failed = 0;
    line->buf[0] = '\0';
    halo_pmi_wire_line_add(line, "cmd", cmd);
}

void halo_pmi_wire_line_add(halo_pmi_wire_line_t *line, const char *key, const char *value)
{
    if (key[0] == '\0' || value == NULL || !halo_pmi_wire_value_is_valid(value)) {
        line->failed = 1;
        return;
    }
    for (const char *p = key; *p != '\0'; p++) {
        if (!pmi_wire_key_char_is_valid((unsigned char)*p)) {
            line->failed = 1;
            return;
        }
    }
    if (line->len > 0) {
        pmi_wire_line_append(line, " ", 1);
    }
    pmi_wire_line_append(line, key, strlen(key));
    pmi_wire_line_append(line, "=", 1);
    pmi_wire_line_append(line, value, strlen(value));
}

void halo_pmi_wire_line_add_int(halo_pmi_wire_line_t *line, const char *key, long value)
{
    char num[32];

    snprintf(num, sizeof(num), "%ld", value);
    halo_pmi_wire_line_add(line, key, num);
}

int halo_pmi_wire_line_end(halo_pmi_wire_line_t *line)
{
    if (line->failed || line->len == 0 || line->len + 1 > HALO_PMI_WIRE_LINE_MAX) {
        line->failed = 1;
        return -1;
    }
    line->buf[line->len++] = '\n';
    line->buf[line->len] = '\0';
    return (int)line->len;
}

size_t halo_pmi_wire_encoded_len(const char *in)
{
    size_t n = 0;

    for (const unsigned char *p = (const unsigned char *)in; *p != '\0'; p++) {
        n += pmi_wire_char_is_safe(*p) ? 1 : 3;
    }
    return n;
}

long halo_pmi_wire_encode(char *out, size_t n, const char *in)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t len = 0;

    for (const unsigned char *p = (const unsigned char *)in; *p != '\0'; p++) {
        size_t need = pmi_wire_char_is_safe(*p) ? 1 : 3;

        if (len + need + 1 > n) {
            if (n > 0) {
                out[0] = '\0';
            }
            return -1;
        }
        if (need == 1) {
            out[len++] = (char)*p;
        } else {
            out[len++] = '%';
            out[len++] = hex[*p >> 4];
            out[len++] = hex[*p & 0xf];
        }
    }
    if (len + 1 > n) {
        return -1;
    }
    out[len] = '\0';
    return (long)len;
}

long halo_pmi_wire_decode(char *out, size_t n, const char *in)
{
    size_t len = 0;

    for (const char *p = in; *p != '\0'; p++) {
        char c = *p;

        if (c == '%') {
            int hi = pmi_wire_hex_value((unsigned char)p[1]);
            int lo = hi < 0 ? -1 : pmi_wire_hex_value((unsigned char)p[2]);

            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                goto fail;
            }
            c = (char)(hi << 4 | lo);
            p += 2;
        }
        if (len + 2 > n) {
            goto fail;
        }
        out[len++] = c;
    }
    if (n == 0) {
        return -1;
    }
    out[len] = '\0';
    return (long)len;

fail:
    if (n > 0) {
        out[0] = '\0';
    }
    return -1;
}

int halo_pmi_wire_chunk_header_format(char *out, size_t n, int nchunks, size_t total_len)
{
    int len;

    if (nchunks < 1) {
        return -1;
    }
    len = snprintf(out, n, "%s%d:%zu", HALO_PMI_WIRE_CHUNK_MARK, nchunks, total_len);
    return (len < 0 || (size_t)len >= n) ? -1 : len;
}

/* Parses a decimal run without sign or leading junk; advances *s_p. */
static int pmi_wire_parse_decimal(const char **s_p, unsigned long long max,
                                  unsigned long long *value_p)
{
    const char *s = *s_p;
    unsigned long long v = 0;

    if (*s < '0' || *s > '9') {
        return -1;
    }
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (unsigned long long)(*s - '0');
        if (v > max) {
            return -1;
        }
    }
    *s_p = s;
    *value_p = v;
    return 0;
}

int halo_pmi_wire_chunk_header_parse(const char *value, int *nchunks_p, size_t *total_len_p)
{
    const size_t mark_len = sizeof(HALO_PMI_WIRE_CHUNK_MARK) - 1;
    const char *s = value;
    unsigned long long nchunks, total;

    if (strncmp(value, HALO_PMI_WIRE_CHUNK_MARK, mark_len) != 0) {
        return 0;
    }
    s += mark_len;
    if (pmi_wire_parse_decimal(&s, INT_MAX, &nchunks) != 0 || nchunks < 1 || *s++ != ':' ||
        pmi_wire_parse_decimal(&s, (unsigned long long)(SIZE_MAX / 2), &total) != 0 ||
        *s != '\0' || total < nchunks) {
        return -1;
    }
    *nchunks_p = (int)nchunks;
    *total_len_p = (size_t)total;
    return 1;
}

int halo_pmi_wire_chunk_key(char *out, size_t n, const char *enc_key, int index)
{
    int len;

    if (index < 0) {
        return -1;
    }
    len = snprintf(out, n, "%s%s%d", enc_key, HALO_PMI_WIRE_CHUNK_MARK, index);
    return (len < 0 || (size_t)len >= n) ? -1 : len;
}

int halo_pmi_wire_chunk_count(size_t total_len, size_t chunk_max)
{
    size_t n = (total_len + chunk_max - 1) / chunk_max;

    return n > INT_MAX ? -1 : (int)(n == 0 ? 1 : n);
}

typedef struct pmi_wire_block {
    int start, count, ppn;
} pmi_wire_block_t;

/* One "(a,b,c)" with a >= 0 and b, c >= 1; advances *s_p. */
static int pmi_wire_mapping_parse_block(const char **s_p, pmi_wire_block_t *block_p)
{
    unsigned long long v[3];
    const char *s = *s_p;

    if (*s++ != '(') {
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        if (pmi_wire_parse_decimal(&s, INT_MAX, &v[i]) != 0 || *s++ != (i < 2 ? ',' : ')')) {
            return -1;
        }
    }
    if (v[1] < 1 || v[2] < 1 || v[0] + v[1] > (unsigned long long)INT_MAX + 1) {
        return -1;
    }
    block_p->start = (int)v[0];
    block_p->count = (int)v[1];
    block_p->ppn = (int)v[2];
    *s_p = s;
    return 0;
}

int halo_pmi_wire_mapping_parse(const char *value, int size, int *node_of_rank_p,
                                int *nnodes_p)
{
    static const char head[] = "(vector";
    pmi_wire_block_t *blocks = NULL;
    const char *s = value;
    int nblocks = 0, maxblocks = 0, rank = 0, maxnode = -1, rc = -1;

    if (size < 1 || strncmp(s, head, sizeof(head) - 1) != 0) {
        goto out;
    }
    for (const char *p = s; *p != '\0'; p++) {
        maxblocks += *p == '(';
    }
    blocks = malloc(sizeof(*blocks) * (size_t)maxblocks);
    if (blocks == NULL) {
        goto out;
    }
    s += sizeof(head) - 1;
    while (*s == ',') {
        s++;
        if (nblocks == maxblocks || pmi_wire_mapping_parse_block(&s, &blocks[nblocks]) != 0) {
            goto out;
        }
        nblocks++;
    }
    if (nblocks == 0 || *s++ != ')' || *s != '\0') {
        goto out;
    }

    /* Every pass over the blocks places at least one rank, so this ends. */
    while (rank < size) {
        for (int b = 0; b < nblocks && rank < size; b++) {
            for (int k = 0; k < blocks[b].count && rank < size; k++) {
                int node = blocks[b].start + k;

                for (int j = 0; j < blocks[b].ppn && rank < size; j++) {
                    node_of_rank_p[rank++] = node;
                }
                maxnode = node > maxnode ? node : maxnode;
            }
        }
    }
    *nnodes_p = maxnode + 1;
    rc = 0;

out:
    free(blocks);
    return rc;
}

int halo_pmi_wire_mapping_format(char *out, size_t n, const int *node_of_rank, int size)
{
    size_t len;
    int r = 0, nblocks = 0;
    pmi_wire_block_t cur = {0, 0, 0};

    len = (size_t)snprintf(out, n, "(vector");
    if (len >= n) {
        return -1;
    }
    /* Runs of equal node become (node,1,run); runs of equal length on
     * consecutive nodes then merge into one block. */
    while (r <= size) {
        int node = 0, run = 0;

        if (r < size) {
            node = node_of_rank[r];
            while (r + run < size && node_of_rank[r + run] == node) {
                run++;
            }
            if (nblocks > 0 && cur.ppn == run && node == cur.start + cur.count) {
                cur.count++;
                r += run;
                continue;
            }
        }
        if (nblocks > 0) {
            int w = snprintf(out + len, n - len, ",(%d,%d,%d)", cur.start, cur.count, cur.ppn);

            if (w < 0 || (size_t)w >= n - len) {
                return -1;
            }
            len += (size_t)w;
        }
        if (r == size) {
            break;
        }
        cur.start = node;
        cur.count = 1;
        cur.ppn = run;
        nblocks++;
        r += run;
    }
    if (nblocks == 0 || len + 2 > n) {
        return -1;
    }
    out[len++] = ')';
    out[len] = '\0';
    return (int)len;
}
