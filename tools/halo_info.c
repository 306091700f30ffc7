/* halo_info: what this Halo build is and can do.
 *   halo_info                 version and summary
 *   halo_info --unsupported   MPI functions that return MPI_ERR_UNSUPPORTED_OPERATION
 *   halo_info --supported     MPI functions implemented
 *   halo_info --all           summary plus every configuration variable
 *   halo_info --coll          collective algorithms, their restrictions and the current choice
 *   halo_info --coll-json     the collective tuning table in force, as a HALO_TUNING_FILE */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int halo_tool_api_count(void);
const char *halo_tool_api_name(int i);
int halo_tool_api_supported(int i);
void halo_tool_config_print(FILE *out);
void halo_tool_coll_print(FILE *out);
void halo_tool_coll_print_json(FILE *out);

static void summary(void)
{
    int n = halo_tool_api_count(), ok = 0;
    for (int i = 0; i < n; i++)
        ok += halo_tool_api_supported(i);
    printf("Halo MPI %d.%d: MPI %d.%d, standard ABI %d.%d (libmpi_abi.so)\n", HALO_VERSION_MAJOR,
           HALO_VERSION_MINOR, MPI_VERSION, MPI_SUBVERSION, MPI_ABI_VERSION, MPI_ABI_SUBVERSION);
    printf("functions: %d of %d implemented (`halo_info --unsupported` lists the rest)\n", ok, n);
    printf("transports: self, shared memory (rings, cells, CMA rendezvous)\n");
}

static void list(int want_supported)
{
    int n = halo_tool_api_count();
    for (int i = 0; i < n; i++)
        if (halo_tool_api_supported(i) == want_supported)
            printf("%s\n", halo_tool_api_name(i));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        summary();
        return 0;
    }
    if (!strcmp(argv[1], "--unsupported"))
        list(0);
    else if (!strcmp(argv[1], "--supported"))
        list(1);
    else if (!strcmp(argv[1], "--all")) {
        summary();
        printf("\nconfiguration variables (environment):\n");
        halo_tool_config_print(stdout);
    } else if (!strcmp(argv[1], "--coll")) {
        halo_tool_coll_print(stdout);
    } else if (!strcmp(argv[1], "--coll-json")) {
        halo_tool_coll_print_json(stdout);
    } else if (!strcmp(argv[1], "--version")) {
        printf("Halo MPI %d.%d\n", HALO_VERSION_MAJOR, HALO_VERSION_MINOR);
    } else {
        fprintf(stderr, "usage: halo_info [--unsupported | --supported | --all | --coll | --coll-json | --version]\n");
        return 2;
    }
    return 0;
}
