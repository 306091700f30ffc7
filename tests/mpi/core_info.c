/* Info objects: keys in insertion order (an overwrite keeps the position),
 * MPI_Info_get_string's buflen in/out and truncation, get_valuelen, nkeys,
 * nthkey, delete, dup (independent copy), free; MPI_INFO_ENV and
 * MPI_Info_create_env; errors for a missing key, over-long keys and values. */
#include "mpitest.h"

static void expect_keys(MPI_Info info, int n, const char *const keys[], const char *const vals[])
{
    int nkeys = -1;
    MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == n, "nkeys %d, want %d", nkeys, n);
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY];
        MPI_OK(MPI_Info_get_nthkey(info, i, key));
        CHECK(!strcmp(key, keys[i]), "key %d is \"%s\", want \"%s\"", i, key, keys[i]);
        char val[64];
        int buflen = sizeof val, flag = 0;
        MPI_OK(MPI_Info_get_string(info, key, &buflen, val, &flag));
        CHECK(flag, "key \"%s\" not found", key);
        CHECK(!strcmp(val, vals[i]), "key \"%s\" = \"%s\", want \"%s\"", key, val, vals[i]);
        CHECK(buflen == (int)strlen(vals[i]) + 1, "key \"%s\": buflen %d, want %zu", key, buflen,
              strlen(vals[i]) + 1);
    }
}

static void test_basic(void)
{
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    CHECK(info != MPI_INFO_NULL, "MPI_Info_create gave MPI_INFO_NULL");
    int nkeys = -1;
    MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK_INT(nkeys, 0);

    MPI_OK(MPI_Info_set(info, "zeta", "1"));
    MPI_OK(MPI_Info_set(info, "alpha", "two"));
    MPI_OK(MPI_Info_set(info, "mid", "three!"));
    {
        const char *k[] = {"zeta", "alpha", "mid"}, *v[] = {"1", "two", "three!"};
        expect_keys(info, 3, k, v);
    }
    /* An overwrite changes the value and keeps the position. */
    MPI_OK(MPI_Info_set(info, "alpha", "a much longer value"));
    {
        const char *k[] = {"zeta", "alpha", "mid"}, *v[] = {"1", "a much longer value", "three!"};
        expect_keys(info, 3, k, v);
    }

    /* get_valuelen: strlen, without the terminator. */
    int len = -1, flag = -1;
    MPI_OK(MPI_Info_get_valuelen(info, "alpha", &len, &flag));
    CHECK(flag == 1 && len == 19, "valuelen of alpha: flag %d len %d", flag, len);
    flag = -1;
    MPI_OK(MPI_Info_get_valuelen(info, "nokey", &len, &flag));
    CHECK_INT(flag, 0);

    /* get_string: buflen is in/out; the value is truncated to buflen-1
     * characters and always terminated; buflen 0 leaves value alone. */
    char val[64];
    int buflen = 5;
    memset(val, '#', sizeof val);
    MPI_OK(MPI_Info_get_string(info, "alpha", &buflen, val, &flag));
    CHECK(flag == 1, "alpha not found");
    CHECK(!strcmp(val, "a mu"), "truncated value \"%s\", want \"a mu\"", val);
    CHECK(buflen == 20, "buflen after truncation %d, want 20", buflen);
    CHECK(val[5] == '#', "get_string wrote past buflen");
    buflen = 0;
    memset(val, '#', sizeof val);
    MPI_OK(MPI_Info_get_string(info, "alpha", &buflen, val, &flag));
    CHECK(flag == 1 && buflen == 20, "buflen=0 query: flag %d buflen %d", flag, buflen);
    CHECK(val[0] == '#', "get_string with buflen 0 changed the value");
    buflen = 20;
    MPI_OK(MPI_Info_get_string(info, "alpha", &buflen, val, &flag));
    CHECK(!strcmp(val, "a much longer value") && buflen == 20, "exact fit: \"%s\" buflen %d", val,
          buflen);
    buflen = sizeof val;
    flag = -1;
    MPI_OK(MPI_Info_get_string(info, "nokey", &buflen, val, &flag));
    CHECK_INT(flag, 0);

    /* dup is a separate object with the same keys in the same order. */
    MPI_Info copy;
    MPI_OK(MPI_Info_dup(info, &copy));
    CHECK(copy != info && copy != MPI_INFO_NULL, "MPI_Info_dup gave %p for %p", (void *)copy,
          (void *)info);
    {
        const char *k[] = {"zeta", "alpha", "mid"}, *v[] = {"1", "a much longer value", "three!"};
        expect_keys(copy, 3, k, v);
    }
    MPI_OK(MPI_Info_set(copy, "zeta", "changed"));
    MPI_OK(MPI_Info_set(copy, "extra", "x"));

    /* delete keeps the order of the rest. */
    MPI_OK(MPI_Info_delete(info, "zeta"));
    {
        const char *k[] = {"alpha", "mid"}, *v[] = {"a much longer value", "three!"};
        expect_keys(info, 2, k, v);
    }
    MPI_FAILS(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, "zeta"));
    MPI_FAILS(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, "never-set"));
    /* A key set again after a delete goes to the end. */
    MPI_OK(MPI_Info_set(info, "zeta", "back"));
    {
        const char *k[] = {"alpha", "mid", "zeta"}, *v[] = {"a much longer value", "three!", "back"};
        expect_keys(info, 3, k, v);
    }
    {
        const char *k[] = {"zeta", "alpha", "mid", "extra"};
        const char *v[] = {"changed", "a much longer value", "three!", "x"};
        expect_keys(copy, 4, k, v);
    }

    /* Keys: up to MPI_MAX_INFO_KEY-1 characters. */
    char key[MPI_MAX_INFO_KEY + 2];
    memset(key, 'k', sizeof key);
    key[MPI_MAX_INFO_KEY - 1] = '\0';
    MPI_OK(MPI_Info_set(info, key, "longest key"));
    buflen = sizeof val;
    MPI_OK(MPI_Info_get_string(info, key, &buflen, val, &flag));
    CHECK(flag && !strcmp(val, "longest key"), "longest key: flag %d \"%s\"", flag, val);
    char nth[MPI_MAX_INFO_KEY];
    MPI_OK(MPI_Info_get_nthkey(info, 3, nth));
    CHECK(!strcmp(nth, key), "nthkey of the longest key has length %zu", strlen(nth));
    key[MPI_MAX_INFO_KEY - 1] = 'k';
    key[MPI_MAX_INFO_KEY] = '\0';
    MPI_FAILS(MPI_ERR_INFO_KEY, MPI_Info_set(info, key, "too long"));
    MPI_FAILS(MPI_ERR_INFO_KEY, MPI_Info_set(info, "", "empty key"));
    MPI_FAILS(MPI_ERR_INFO_KEY, MPI_Info_delete(info, key));
    MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK_INT(nkeys, 4);
    /* Values: up to MPI_MAX_INFO_VAL-1 characters. */
    static char big[MPI_MAX_INFO_VAL + 1], back[MPI_MAX_INFO_VAL + 1];
    memset(big, 'v', MPI_MAX_INFO_VAL - 1);
    big[MPI_MAX_INFO_VAL - 1] = '\0';
    MPI_OK(MPI_Info_set(info, "big", big));
    buflen = sizeof back;
    MPI_OK(MPI_Info_get_string(info, "big", &buflen, back, &flag));
    CHECK(flag && !strcmp(back, big) && buflen == MPI_MAX_INFO_VAL, "big value: buflen %d",
          buflen);
    big[MPI_MAX_INFO_VAL - 1] = 'v';
    big[MPI_MAX_INFO_VAL] = '\0';
    MPI_FAILS(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "big2", big));

    /* nthkey past the end is an error. */
    char k2[MPI_MAX_INFO_KEY];
    MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(MPI_Info_get_nthkey(info, nkeys, k2) != MPI_SUCCESS, "nthkey(%d) of %d keys succeeded",
          nkeys, nkeys);

    MPI_OK(MPI_Info_free(&copy));
    CHECK(copy == MPI_INFO_NULL, "MPI_Info_free did not reset the handle");
    MPI_OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "MPI_Info_free did not reset the handle");
    MPI_FAILS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_NULL, "a", "b"));
}

/* Many keys stay in insertion order; overwriting all of them keeps it. */
static void test_many_keys(void)
{
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    enum { N = 500 };
    char key[32], val[32], got[32];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "key%d", (i * 7919) % N);
        snprintf(val, sizeof val, "v%d", i);
        MPI_OK(MPI_Info_set(info, key, val));
    }
    for (int i = N - 1; i >= 0; i -= 3) {
        snprintf(key, sizeof key, "key%d", (i * 7919) % N);
        snprintf(val, sizeof val, "w%d", i);
        MPI_OK(MPI_Info_set(info, key, val));
    }
    int nkeys;
    MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK_INT(nkeys, N);
    for (int i = 0; i < N; i++) {
        char k[MPI_MAX_INFO_KEY];
        MPI_OK(MPI_Info_get_nthkey(info, i, k));
        snprintf(key, sizeof key, "key%d", (i * 7919) % N);
        CHECK(!strcmp(k, key), "key %d is %s, want %s", i, k, key);
        int buflen = sizeof got, flag;
        MPI_OK(MPI_Info_get_string(info, k, &buflen, got, &flag));
        snprintf(val, sizeof val, "%c%d", (N - 1 - i) % 3 == 0 ? 'w' : 'v', i);
        CHECK(!strcmp(got, val), "%s = %s, want %s", k, got, val);
    }
    MPI_OK(MPI_Info_free(&info));
}

static void test_env(int argc, char **argv, int size)
{
    char val[MPI_MAX_INFO_VAL];
    int buflen = sizeof val, flag = 0;
    MPI_OK(MPI_Info_get_string(MPI_INFO_ENV, "command", &buflen, val, &flag));
    CHECK(flag, "MPI_INFO_ENV has no \"command\"");
    CHECK(strstr(val, "core_info") != NULL, "MPI_INFO_ENV command \"%s\"", val);
    /* Arguments KEY=VALUE: what mpiexec's options must have put in
     * MPI_INFO_ENV (size=N: the job's size). Without them, maxprocs is the
     * job's size. */
    int expected = 0, want_max = size;
    for (int i = 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (!eq)
            continue;
        expected = 1;
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(eq - argv[i]), argv[i]);
        if (!strcmp(key, "size")) {
            CHECK(atoi(eq + 1) == size, "world size %d, want %s", size, eq + 1);
            continue;
        }
        if (!strcmp(key, "maxprocs"))
            want_max = atoi(eq + 1);
        buflen = sizeof val;
        flag = 0;
        MPI_OK(MPI_Info_get_string(MPI_INFO_ENV, key, &buflen, val, &flag));
        CHECK(flag, "MPI_INFO_ENV has no \"%s\"", key);
        CHECK(!strcmp(val, eq + 1), "MPI_INFO_ENV %s = \"%s\", want \"%s\"", key, val, eq + 1);
    }
    buflen = sizeof val;
    MPI_OK(MPI_Info_get_string(MPI_INFO_ENV, "maxprocs", &buflen, val, &flag));
    CHECK(flag, "MPI_INFO_ENV has no \"maxprocs\"");
    CHECK(atoi(val) == want_max, "MPI_INFO_ENV maxprocs \"%s\", want %d (world size %d%s)", val,
          want_max, size, expected ? ", as the arguments say" : "");
    int nkeys = -1;
    MPI_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys));
    CHECK(nkeys >= 2, "MPI_INFO_ENV has %d keys", nkeys);

    /* A dup of MPI_INFO_ENV is an ordinary info object. */
    MPI_Info d;
    MPI_OK(MPI_Info_dup(MPI_INFO_ENV, &d));
    MPI_OK(MPI_Info_set(d, "maxprocs", "12345"));
    MPI_OK(MPI_Info_free(&d));
    buflen = sizeof val;
    MPI_OK(MPI_Info_get_string(MPI_INFO_ENV, "maxprocs", &buflen, val, &flag));
    CHECK(atoi(val) == want_max, "MPI_INFO_ENV changed through a dup: maxprocs \"%s\"", val);

    MPI_Info env;
    MPI_OK(MPI_Info_create_env(argc, argv, &env));
    CHECK(env != MPI_INFO_NULL && env != MPI_INFO_ENV, "MPI_Info_create_env gave %p",
          (void *)env);
    buflen = sizeof val;
    MPI_OK(MPI_Info_get_string(env, "command", &buflen, val, &flag));
    CHECK(flag && strstr(val, "core_info") != NULL, "create_env command: flag %d", flag);
    MPI_OK(MPI_Info_set(env, "mine", "yes"));
    MPI_OK(MPI_Info_free(&env));
    MPI_OK(MPI_Info_create_env(0, NULL, &env));
    MPI_OK(MPI_Info_free(&env));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    /* Info errors belong to no communicator: they go to MPI_COMM_SELF. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    test_basic();
    test_many_keys();
    test_env(argc, argv, size);
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_info: ok\n");
    return 0;
}
