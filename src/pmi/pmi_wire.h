/* The PMI-1 wire protocol, shared by the client (pmi_client.c) and the
 * server in tools/mpiexec.
 *
 * A message is one line: `cmd=NAME key=value key=value ...\n`. Pairs are
 * separated by single spaces; a key is [A-Za-z0-9_]+; a value is any run of
 * printable non-space characters and may itself contain '=' (the pair is
 * split at the first '='). Hydra and MPICH's simple PMI read lines this way,
 * so a value must never contain a space or a newline.
 *
 * Halo's own keys and values cross the wire escaped (see
 * halo_pmi_wire_encode): bytes outside a conservative safe set become %XX.
 * A value longer than the server's vallen_max is stored in chunks: the key
 * itself holds a header `%!<nchunks>:<encoded length>`, chunk i is stored
 * under `<encoded key>%!<i>`. Neither form can be produced by the encoder
 * ('%' is always followed by two hex digits in an encoded string), so plain
 * values, chunked values and chunk keys never collide. */
#ifndef HALO_PMI_WIRE_H
#define HALO_PMI_WIRE_H

#include <stddef.h>

/* Longest line either side sends or accepts, newline included. Hydra's
 * longest reply (a get_result with a 1024-byte value) is well under it. */
#define HALO_PMI_WIRE_LINE_MAX 4096
/* Most pairs in one message (cmd included); PMI-1 messages have at most 6. */
#define HALO_PMI_WIRE_PAIRS_MAX 16

/* The limits our mpiexec announces in get_maxes (the same as Hydra's, so a
 * client tuned to one works with the other). A key must be shorter than
 * keylen_max: Hydra accepts a put with a 64-byte key but never finds it. */
#define HALO_PMI_WIRE_KVSNAME_MAX 256
#define HALO_PMI_WIRE_KEYLEN_MAX 64
#define HALO_PMI_WIRE_VALLEN_MAX 1024

typedef struct halo_pmi_wire_pair {
    const char *key;
    const char *value;
} halo_pmi_wire_pair_t;

/* A parsed line. The pairs point into buf, so the message owns its text. */
typedef struct halo_pmi_wire_msg {
    int npairs;
    halo_pmi_wire_pair_t pairs[HALO_PMI_WIRE_PAIRS_MAX];
    char buf[HALO_PMI_WIRE_LINE_MAX];
} halo_pmi_wire_msg_t;

/* A line being formatted; check the result of halo_pmi_wire_line_end. */
typedef struct halo_pmi_wire_line {
    size_t len;
    int failed; /* overflow or a character that cannot go on the wire */
    char buf[HALO_PMI_WIRE_LINE_MAX + 1];
} halo_pmi_wire_line_t;

/* Parses one line (len bytes, with or without the trailing newline). The
 * first pair must be cmd=... . Returns 0, or -1 for a malformed line. */
int halo_pmi_wire_parse(const char *line, size_t len, halo_pmi_wire_msg_t *msg_p);

/* The value of key in msg, or NULL when the key is absent. */
const char *halo_pmi_wire_msg_get(const halo_pmi_wire_msg_t *msg, const char *key);

/* The value of key as an int: 0, or -1 when absent or not a decimal int. */
int halo_pmi_wire_msg_get_int(const halo_pmi_wire_msg_t *msg, const char *key, int *value_p);

/* 1 when msg is `cmd=<cmd> ...`. */
int halo_pmi_wire_msg_is(const halo_pmi_wire_msg_t *msg, const char *cmd);

/* Formatting: begin with the command, add pairs, end appends '\n'.
 * line_end returns the line length, or -1 if any step failed (too long,
 * or a key/value that would not survive the wire). */
void halo_pmi_wire_line_begin(halo_pmi_wire_line_t *line, const char *cmd);
void halo_pmi_wire_line_add(halo_pmi_wire_line_t *line, const char *key, const char *value);
void halo_pmi_wire_line_add_int(halo_pmi_wire_line_t *line, const char *key, long value);
int halo_pmi_wire_line_end(halo_pmi_wire_line_t *line);

/* 1 when value can be sent as it is (non-empty run of printable,
 * non-space characters). Empty values are allowed on the wire too. */
int halo_pmi_wire_value_is_valid(const char *value);

/* Escaping. encode writes the escaped form of the C string in, NUL
 * terminated, into out (n bytes). Returns the encoded length, or -1 when it
 * does not fit. encoded_len gives the length without writing. */
long halo_pmi_wire_encode(char *out, size_t n, const char *in);
size_t halo_pmi_wire_encoded_len(const char *in);

/* Reverses encode into out (n bytes, NUL terminated). Returns the decoded
 * length, or -1 for a malformed escape, an escaped NUL, or lack of room. */
long halo_pmi_wire_decode(char *out, size_t n, const char *in);

/* Chunked values (see the top of this file). */
#define HALO_PMI_WIRE_CHUNK_MARK "%!"
/* Writes the header stored under the key. Returns its length or -1. */
int halo_pmi_wire_chunk_header_format(char *out, size_t n, int nchunks, size_t total_len);
/* Parses a stored value: 1 and the fields when it is a chunk header, 0 when
 * it is an ordinary value, -1 when it starts like a header but is broken. */
int halo_pmi_wire_chunk_header_parse(const char *value, int *nchunks_p, size_t *total_len_p);
/* Writes the key of chunk index of the (already encoded) key. Returns its
 * length or -1 when it does not fit. */
int halo_pmi_wire_chunk_key(char *out, size_t n, const char *enc_key, int index);
/* How many chunks a value of encoded length total_len needs when a chunk
 * holds at most chunk_max bytes (chunk_max > 0). */
int halo_pmi_wire_chunk_count(size_t total_len, size_t chunk_max);

/* The value of PMI_process_mapping: "(vector,(start_node,num_nodes,
 * ranks_per_node),...)". Each block puts ranks_per_node consecutive ranks on
 * each of num_nodes nodes counted from start_node; the list of blocks repeats
 * until all size ranks are placed (MPICH's rule: Hydra describes 2 ranks on
 * one host as (vector,(0,1,1))). parse fills node_of_rank_p[size] and
 * *nnodes_p (largest node index + 1); returns 0, or -1 if malformed. */
int halo_pmi_wire_mapping_parse(const char *value, int size, int *node_of_rank_p,
                                int *nnodes_p);
/* The shortest vector for node_of_rank[size] without relying on repetition.
 * Returns its length, or -1 when it does not fit in n bytes. */
int halo_pmi_wire_mapping_format(char *out, size_t n, const int *node_of_rank, int size);

#endif /* HALO_PMI_WIRE_H */
