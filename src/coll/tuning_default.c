/* The built-in tuning table, in the format of HALO_TUNING_FILE (see
 * docs/collectives.md), parsed by the same code at start-up; `halo_info
 * --coll-json` prints it as a starting point for a file of one's own.
 *
 * For each collective, rules in order: the first whose bounds hold
 * (inclusive; a missing bound is no bound) and whose algorithm's
 * restrictions hold wins. msg_size is in bytes, as docs/collectives.md
 * defines it per collective (the whole vector for reductions and Bcast,
 * one rank's block for the gathers, scatters and Alltoall).
 *
 * The reasoning, from the algorithms' cost models: small messages are
 * dominated by latency, so the lg p algorithms (binomial trees, recursive
 * doubling, Bruck); large ones by bandwidth, so the algorithms that move
 * each byte about once (scatter-allgather and pipelined broadcast,
 * Rabenseifner and ring reductions, ring allgather, pairwise exchanges).
 * The crossover sizes are the usual ones on shared memory and fast
 * networks; `halo-tune` will measure them for a given machine. One node,
 * measured (halo-bench bcast with each algorithm forced, 2 to 8 ranks on 2
 * cores): Bcast through the shared slots up to 64K from 3 ranks, then the
 * linear one, whose receivers all read the message at once straight from
 * the root's buffer (CMA; 4 MiB at 8 ranks 676 us against 1534 for the
 * binomial tree, whose levels copy in turn, and 1990 through the slots,
 * whose chunks need every rank scheduled in turn). Gather through the
 * slots while a block fits one slot (64K), then linear, the root reading
 * each block once (forced, two alternations, 96K and 128K blocks: 3 ranks
 * 8.9-9.5/10.6-10.9 us against 14.2-14.8/17.8-17.9 through the slots, 4
 * ranks 13.4-15.2/15.9-17.3 against 20.6-20.7/26.0-27.5, 8 ranks
 * 27.6-31.3/37.9-45.1 against 43.1-45.8/64.8-65.9, 16 ranks 88-91/121-124
 * against 123-128/160-162; at 64K the slots win everywhere). Allgather(v) of
 * blocks above 128K with fewer than 8 ranks: linear, every block read
 * once from its owner (4 ranks, 1 MiB blocks: 555 us against 796 for
 * the ring); at 2 ranks from 64K (64 KiB: 9.7-11.6 us against 11.8-15.3
 * through the slots). Allreduce through the slots (reduce-scatter,
 * allgather) up to 512K from 3 ranks, 1M from 5 and 4M from 8 (8 ranks,
 * 1 MiB: 1231-1239 us against 1272-2537 for Rabenseifner); at 3 and 4
 * ranks Rabenseifner up to 1M, then the ring (five alternations of the
 * two tables, 768K and 1M: 4 ranks 312-549 us against 364-782 through the
 * slots, 3 ranks 240-403 against 247-512; forced, 2 MiB at 4 ranks: ring
 * 779-1205, slots 1111-1879). At 2 ranks above 16K recursive doubling,
 * one exchange whose received vector lands in the result (four
 * alternations: 64 KiB 8.0-8.5 us against 10.9-20.7 through the slots,
 * 256 KiB 27-32 against 45-56). From 3 ranks on more ranks than
 * processors, above 256K, single-copy reads and writes (cma: two flag
 * waits in all where the slots take three per 64K chunk, each a round of
 * context switches). Alternated runs at 8 ranks, with the cache line
 * handed over in 31 ns: 512 KiB-2 MiB ahead of the slots (1 MiB 846-909
 * us against 950-1015), behind them at 256 KiB (258-277 against 185-224)
 * and 4 MiB (4610-5163 against 4216-4321); with the line at 160 ns (a
 * slow spell of the VM) ahead at every size from 256 KiB (290-347 against
 * 457-510; 1 MiB 859-894 against 1936-2043; 4 MiB 4886-5056 against
 * 8549-8982). At 4 ranks level with Rabenseifner in the fast spell (1 MiB
 * 320-347 against 309-316) and twice as fast in the slow one (1 MiB
 * 357-414 against 787-975, 4 MiB 1696-1934 against 3188-3969).
 * Alltoall through the slots up to 8K, and up to 16K at 3 and 4 ranks on
 * fewer cores, where such blocks fit the whole slot and go in one round
 * (each round's two flag waits are a round of process switches there: 4
 * ranks, 16 KiB, five alternations, 8.1 us against 10.9 for linear; 8
 * ranks, 8 KiB, one round instead of two, 16.3 against 26.3). At 4 ranks
 * on fewer cores from 32K to 128K single-copy reads (seven alternations:
 * 0.86-0.93 of linear's time, 64K 21.8 us against 23.4; from 192K the
 * fastest runs tie; at 3 and 8 ranks linear stays ahead). Above: linear
 * at every size with several
 * ranks per node (4 MiB blocks at 4 ranks 5628 us, pairwise 6316; at 8
 * ranks 21520 against 29062). Scan and Exscan: the chain up to 16 ranks
 * of a node (8 ranks, 1 MiB: 1164 us against 2691 for recursive doubling,
 * whose every step reduces twice; 4 ranks, 8 B: 3.4 against 6.0); the
 * shared slots before it where they lead (two alternations, -i 200):
 * scan at 2 ranks up to 64K (0.23 against 0.27 us at 8 B, 9.5 against 13
 * at 64K), exscan there up to 4K (at 64K one message wins, 6 against 11);
 * from 5 ranks up to 64K (8 ranks, 8 B: 7.4-8.4 against 12.7-16); at 3
 * and 4 ranks too since ranks are bound round robin (three alternations
 * of each forced, 8 B-32 KiB: 4 ranks Scan 0.15-0.25 us at 8 B against
 * 0.57-0.86 by the chain, 32 KiB 5.7-6.4 against 15.2-15.7; 3 ranks
 * 0.13-0.22 against 0.23, 5.0-5.2 against 10.5-11.0; Exscan alike).
 * Reduce at 2 ranks: through the slots up to 16K, the single message
 * of the binomial tree above (seven alternations, 32 KiB: 5.3 us against
 * 6.5; 64 KiB 11.1 against 11.6; 8 KiB 1.5 against 1.2); on the Intel
 * processor with a core each, above 512K Rabenseifner, whose halves each
 * core reduces (three alternations, 768 KiB, 1, 2 and 8 MiB: 65-82,
 * 106-107, 280-293, 1146-1156 us against 78-92, 145-183, 349-353,
 * 1326-1346 by the tree; 512 KiB level at 38-41 against 36-38); and
 * Allreduce there above 1M by the ring, where each core reduces half
 * where recursive doubling has both reduce all of it (three alternations,
 * 1.5, 2, 3 and 8 MiB: 200-223, 316-334, 486-504, 1291-1384 us against
 * 245-352, 345-458, 567-716, 1574-2160; 1 MiB level, 117-129 against
 * 113-135).
 * Above those sizes from 5 ranks: up to 512K the scan by parts (every
 * member scans its part of all slots at once; three and four alternations
 * at 8 ranks, Scan 128 KiB 64-79 us against 100-103 for the pipelined
 * chain, 256 KiB 134-184 against 177-184, 512 KiB 280-348 against
 * 307-367; Exscan 128 KiB 70-88 against 99-104; at 1 MiB Exscan 778-846
 * against 658-892, three flag waits per 64 KiB chunk cost a round of
 * context switches each when ranks outnumber the cores; at 4 ranks no
 * better than the chain), then the pipelined chain; at 3 and 4 ranks that
 * chain from 2 MiB (six alternations against the chain; 8 ranks, 256 KiB
 * to 4 MiB: Scan 0.62-0.95 of its time, Exscan 0.59-0.85; 4 ranks: Scan
 * 0.91 at 1 MiB and 0.67 at 4 MiB, Exscan 1.07 and 0.74). Measured again
 * with ranks bound round robin (two or three alternations, -i 20 from 2
 * MiB): the pipelined chain lost wherever ranks share a CPU; 4 ranks
 * Scan of 2, 4, 8 MiB 994-1049, 2219-2318, 4636-4936 us against 737-745,
 * 1482-1500, 2966-3025 by the chain; 8 ranks Scan of 1 and 4 MiB by parts
 * 804-842 and 3379-3421 against 924-973 and 4660-4776 pipelined. So: Scan
 * above 64K by the chain at 3 and 4 ranks, by parts at 5 to 8 (16 ranks
 * left as they were: there by parts lost at 1 MiB, 1857-2313 against
 * 1600-1644 by the chain); Exscan by parts above 64K at 3 to 8 ranks (3
 * ranks 1, 2, 8 MiB: 180-186, 421-449, 1785-1849 against 215-223, 555-739,
 * 2375-2412 pipelined; 4 ranks 4 MiB 1287-1332 against 1440-1474) but
 * pipelined at 3 and 4 ranks in (128K, 512K] (3 ranks 256 and 512 KiB:
 * 37-38 and 73-81 against 51-52 and 102-103 by parts) and at 5 to 8 in
 * (512K, 1M] (8 ranks 1 MiB, five rounds: 772 against 821).
 * Gather, Scatter and (at 2 ranks) Bcast by single-copy access without
 * messages (cma: the root publishes its buffer, every member reads or
 * writes its own block at once; forced against the table before it,
 * medians of 5 interleaved runs, us): Gather at 2 ranks from 8K (8, 16,
 * 32 KiB: 0.93/1.23/2.02 against 1.17/1.81/3.97 linear; 4K 0.84 against
 * 0.75 through the slots), from 3 ranks above 16K (32 KiB at 3, 4, 8
 * ranks 3.65/4.25/5.12 against 4.33/6.07/5.20 through the slots; 256 KiB
 * 15.0/16.5/38.7 against 26.3/50.1/122 linear; 1 MiB at 8 ranks 196
 * against 455); Scatter at 2 ranks from 8K (0.96/1.21 at 8/16 KiB against
 * 1.08/1.34 linear), from 5 ranks above 4K (4 KiB 2.62 against 3.25), at 3
 * and 4 ranks above 8K (3 ranks 4 and 8 KiB: 2.08/2.37 against 0.65/1.29;
 * 256 KiB 15.7 against 31.7; 4 ranks 1 MiB 157 against 193); Bcast at 2
 * ranks 8-32K (0.98/1.25/2.12 against 1.07/1.42/2.14 by binomial tree; 4K
 * 0.81 against 0.70 through the slots, 64K 3.29 against 2.95 linear),
 * and from 4 ranks on more ranks than processors above 16K up to 128K:
 * ahead at 8 ranks (32/64 KiB 5.08/7.72 against 6.05/8.37 linear; in
 * bench/compare 0.79/0.89 of the table before), level at 4 (two sets of
 * runs, 32/64/128 KiB: 4.03-4.45/6.82-8.07/14.8-16.2 against
 * 4.44-4.46/7.08-7.80/16.0-16.3 linear); 256 KiB behind at both (35-43
 * against 31-36); at 3 ranks behind the slots everywhere. Since the root
 * writes the bytes of the members bound to its CPU (shm_bcast_cma.c), at
 * every size above 16K from 4 ranks and above 32K at 3 on more ranks than
 * processors (forced, medians of 5, us: 3 ranks 64K/128K/256K/1M
 * 5.5/7.7/13.3/77 against 6.1/19.0/43.5/184 through the slots and
 * 8.4/19.8/31.3/147 linear; 4 ranks 128K/256K/1M/4M 9.2/15.0/114/516
 * against 13.8/30.3/155/598 linear; 8 ranks 256K/1M 28.3/206 against
 * 38.3/281; 3 ranks 32K 4.4 against 3.9 through the slots).
 * Allgather at 8 ranks on one node through the slots up to 1M, above it
 * linear (8 ranks on 2 CPUs, forced, medians of 5, us: 1M 2528 against
 * 2975 linear, 2M 8576 against 8239, 4M 19810 against 17972).
 * Allgather(v) and Alltoall at 2 ranks with a core each from 8K by
 * single-copy reads (cma) instead of the linear exchange's rendezvous
 * messages (forced, medians of 5 interleaved runs, us, 8/16/32/64/256
 * KiB: Alltoall 1.56/1.97/2.93/5.08/17.6-18.8 against 1.58/2.26/3.15/
 * 5.29/16.8-19.6, Allgather 1.63/2.04/2.95/4.81/15.8-18.2 against
 * 1.62/2.21/3.62/4.94/17.0-18.4, Allgatherv 16/256 KiB 2.00/16.4 against
 * 2.29/19.3; level at 1-4 MiB; at 4K the slots lead, 1.16-1.22 against
 * 1.30-1.43). From 4 ranks on 2 cores the linear exchange and the slots
 * stay (4 ranks 16 KiB: Alltoall 11.8 against 12.9, Allgather 8.6 by the
 * slots against 14.2).
 * Scatter through the slots only up to 4K and 4 ranks: from 32K the
 * receivers reading their blocks from the root (CMA) are 2-3x faster
 * (three alternations at 2, 4 and 8 ranks, 64 KiB: 5-16 us against
 * 10-30), the root's copies into slots that the members have just read
 * costing a line transfer each. Gather through the slots up to 32K at 2
 * ranks and 128K from 3 (4 ranks, 64 KiB: 8-9 us against 19-29).
 * Reduce_scatter (halo-bench reduce_scatter, each algorithm forced, 2, 4
 * and 8 ranks): the shared slots up to 64K (256K from 8 ranks), then the
 * pairwise exchange, which moves the least (every block crosses once, read
 * in place with CMA): 1 MiB at 4 ranks 202 us against 225 for recursive
 * halving and 411 through the slots.
 * Barrier with more ranks than cores, up to 4 on the node: the fan, whose
 * member 0 leaves first. Every member waiting for every flag lets the
 * last to arrive leave first, and a rooted call after the barrier (root
 * 0, as benchmarks and many codes have it) then waits for its root to be
 * scheduled; with the fan that wait happens inside the barrier (4 ranks
 * on 2 cores, 8 B, all-flags -> fan: Bcast 2.53 -> 0.11 us, Scatter 1.79
 * -> 0.10, the barrier itself 3.45 -> 5.44; Open MPI 0.63-0.79,
 * 0.66-0.69, 4.10-5.93 in the same runs; docs/performance.md). At 8
 * ranks on 2 cores the barrier's own cost (6.7 -> 10.5 us) outweighs it.
 * Intel processors ("cpu": "intel"; a Xeon of the Sapphire Rapids family
 * under KVM, where a line written by one core takes 64 ns to reach the
 * other, twice the EPYC's time): 2 ranks with a core each leave the slots
 * for point-to-point from 4 KiB, whose single-copy rendezvous copies once
 * where the slots copy twice across the cores (forced, medians of 3, 8
 * and 16 KiB: Bcast 1.15/2.11 us through the slots against 0.95/1.11 by
 * binomial tree, Gather 1.13/2.24 against 0.91/1.75 linear, Allgather
 * 1.84/3.44 against 1.40/1.95, Alltoall 1.83/3.69 against 1.45/1.97,
 * Reduce 1.16/2.29 against 0.97/1.37, Allreduce by shm_rsag 2.15/3.74
 * against 1.44/1.90 by recursive doubling; Reduce_scatter of 64 KiB 4.96
 * against 4.17 pairwise); Exscan keeps the slots to 32 KiB (8 KiB 0.38
 * against 0.92). Reduce of a commutative operation from 256 KiB at 4
 * and from 8 ranks on more ranks than processors by the binomial tree over
 * the ranks ordered by CPU (coll_util.c, halo_coll_cpu_order), forced
 * against the tree in rank order and the slots (medians of 3-5 runs, us):
 * 4 ranks 256K/1M/4M 45.7/344/1372 against 61.2/397/1637 and
 * 61.4/325/1406; 8 ranks 256K/1M/4M 96/595/2512 against 177/794/3968 and
 * 121/628/2716; 12 ranks 1M 815 against 875 through the slots, 16 ranks
 * 256K/4M 233/5410 against 265/5881; but 5 and 6 ranks behind the slots
 * (1M 597 and 542 against 401 and 488), 3 ranks behind the tree in rank
 * order (1M 372 against 250: the order applies from 4 ranks), and 4 ranks
 * at 128K (27 against 25). Reduce above 128 KiB with more ranks than cores, ranks
 * bound round robin (mpiexec's default): the binomial tree at 3 ranks up
 * to 4 MiB and at 4 ranks up to 256 KiB, else through the slots at every
 * size (two alternations of each algorithm forced, 128 KiB to 16 MiB, us:
 * 3 ranks 512 KiB/1 MiB 70-84/177-204 by the tree against 86-106/224-231,
 * 16 MiB 5633-6863 against 3900-5320; 4 ranks 256 KiB 44-47 against
 * 55-60, 4 MiB 1361-1394 against 1118-1172; 8 ranks 1 and 4 MiB 644-680
 * and 3329-3439 against 516-572 and 2095-2307, Rabenseifner 624-630 and
 * 2928-2978; 16 ranks 1 MiB 1146-1214 against 1476-1515 by the tree and
 * 1426-1748 by Rabenseifner). Rounds after the tree's first pair ranks
 * that share a CPU when bound round robin, so the tree's later levels run
 * on one CPU while the other idles. Bcast of 32-64 KiB from 3 ranks by
 * the linear algorithm looked ahead in 3 alternations and behind in 7
 * (unbound): not taken; bound round robin, from 4 ranks on more ranks
 * than cores it is, above 16 KiB (three alternations, us, 32 and 64 KiB:
 * 4 ranks 3.7/5.4-5.9 against 3.7-3.9/6.8-7.2 through the slots, 8 ranks
 * 5.5-5.9/7.5-9.3 against 8.3-9.7/9.3-9.5, 16 ranks 6.5-7.3/10.5-10.9
 * against 13-21/9-20; at 3 ranks the slots stay ahead, 64 KiB 6.2-6.3
 * against 8.2-9.2). */
#include "coll/select.h"

const char halo_coll_tuning_default[] =
    "{\n"
    "  \"barrier\": [\n"
    "    {\"algorithm\": \"two_level\"},\n"
    "    {\"oversubscribed\": true, \"ppn_max\": 4, \"algorithm\": \"shm_fan\"},\n"
    "    {\"algorithm\": \"shm\"},\n"
    "    {\"algorithm\": \"dissemination\"}\n"
    "  ],\n"
    "  \"bcast\": [\n"
    "    {\"algorithm\": \"two_level\"},\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"msg_size_max\": 32768, \"algorithm\": \"cma\"},\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"msg_size_max\": 16384, \"algorithm\": \"binomial\"},\n"
    "    {\"comm_size_max\": 2, \"msg_size_max\": 16384, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 4, \"oversubscribed\": true, \"msg_size_min\": 16385, \"msg_size_max\": 131072, \"algorithm\": \"cma\"},\n"
    "    {\"comm_size_min\": 4, \"oversubscribed\": true, \"bound\": true, \"msg_size_min\": 131073, \"algorithm\": \"cma\"},\n"
    "    {\"comm_size_min\": 3, \"oversubscribed\": true, \"bound\": true, \"msg_size_min\": 32769, \"algorithm\": \"cma\"},\n"
    "    {\"comm_size_min\": 4, \"oversubscribed\": true, \"msg_size_min\": 16385, \"msg_size_max\": 65536, \"algorithm\": \"linear\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_max\": 65536, \"algorithm\": \"shm\"},\n"
    "    {\"msg_size_max\": 12288, \"algorithm\": \"binomial\"},\n"
    "    {\"ppn_min\": 2, \"comm_size_max\": 64, \"algorithm\": \"linear\"},\n"
    "    {\"comm_size_max\": 3, \"algorithm\": \"binomial\"},\n"
    "    {\"msg_size_max\": 524288, \"algorithm\": \"scatter_allgather\"},\n"
    "    {\"algorithm\": \"pipeline\"}\n"
    "  ],\n"
    "  \"gather\": [\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"algorithm\": \"cma\"},\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"algorithm\": \"linear\"},\n"
    "    {\"comm_size_max\": 2, \"msg_size_max\": 32768, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_max\": 16384, \"algorithm\": \"shm\"},\n"
    "    {\"algorithm\": \"cma\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_max\": 65536, \"algorithm\": \"shm\"},\n"
    "    {\"algorithm\": \"linear\"}\n"
    "  ],\n"
    "  \"gatherv\": [\n"
    "    {\"algorithm\": \"shm_linear\"},\n"
    "    {\"algorithm\": \"linear\"}\n"
    "  ],\n"
    "  \"scatter\": [\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"algorithm\": \"cma\"},\n"
    "    {\"comm_size_max\": 4, \"msg_size_max\": 4096, \"algorithm\": \"shm\"},\n"
    "    {\"msg_size_max\": 4096, \"algorithm\": \"linear\"},\n"
    "    {\"comm_size_max\": 4, \"msg_size_max\": 8192, \"algorithm\": \"linear\"},\n"
    "    {\"algorithm\": \"cma\"},\n"
    "    {\"algorithm\": \"linear\"}\n"
    "  ],\n"
    "  \"scatterv\": [\n"
    "    {\"algorithm\": \"shm_linear\"},\n"
    "    {\"algorithm\": \"linear\"}\n"
    "  ],\n"
    "  \"allgather\": [\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"algorithm\": \"cma\"},\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"msg_size_max\": 32768, \"algorithm\": \"linear\"},\n"
    "    {\"comm_size_max\": 2, \"msg_size_max\": 32768, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_max\": 131072, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 8, \"msg_size_max\": 524288, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 8, \"comm_size_max\": 8, \"ppn_min\": 8, \"msg_size_max\": 1048576, \"algorithm\": \"shm\"},\n"
    "    {\"ppn_min\": 2, \"comm_size_max\": 8, \"msg_size_min\": 32769, \"algorithm\": \"linear\"},\n"
    "    {\"msg_size_max\": 32768, \"algorithm\": \"recursive_doubling\"},\n"
    "    {\"msg_size_max\": 4096, \"algorithm\": \"bruck\"},\n"
    "    {\"algorithm\": \"ring\"}\n"
    "  ],\n"
    "  \"allgatherv\": [\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"algorithm\": \"cma\"},\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"msg_size_max\": 32768, \"algorithm\": \"linear\"},\n"
    "    {\"comm_size_max\": 2, \"msg_size_max\": 32768, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_max\": 131072, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 8, \"msg_size_max\": 524288, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 8, \"comm_size_max\": 8, \"ppn_min\": 8, \"algorithm\": \"shm\"},\n"
    "    {\"ppn_min\": 2, \"comm_size_max\": 8, \"msg_size_min\": 32769, \"algorithm\": \"linear\"},\n"
    "    {\"algorithm\": \"ring\"}\n"
    "  ],\n"
    "  \"alltoall\": [\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"algorithm\": \"cma\"},\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"algorithm\": \"linear\"},\n"
    "    {\"msg_size_max\": 8192, \"algorithm\": \"shm\"},\n"
    "    {\"oversubscribed\": true, \"comm_size_min\": 3, \"comm_size_max\": 4, \"msg_size_max\": 16384, \"algorithm\": \"shm\"},\n"
    "    {\"oversubscribed\": true, \"comm_size_min\": 4, \"comm_size_max\": 4, \"msg_size_min\": 32769, \"msg_size_max\": 131072, \"algorithm\": \"cma\"},\n"
    "    {\"ppn_min\": 2, \"comm_size_max\": 64, \"algorithm\": \"linear\"},\n"
    "    {\"msg_size_max\": 1048576, \"algorithm\": \"linear\"},\n"
    "    {\"algorithm\": \"pairwise\"}\n"
    "  ],\n"
    "  \"alltoallv\": [\n"
    "    {\"comm_size_max\": 64, \"algorithm\": \"shm_linear\"},\n"
    "    {\"comm_size_max\": 64, \"algorithm\": \"linear\"},\n"
    "    {\"algorithm\": \"pairwise\"}\n"
    "  ],\n"
    "  \"alltoallw\": [\n"
    "    {\"comm_size_max\": 64, \"algorithm\": \"shm_linear\"},\n"
    "    {\"comm_size_max\": 64, \"algorithm\": \"linear\"},\n"
    "    {\"algorithm\": \"pairwise\"}\n"
    "  ],\n"
    "  \"reduce\": [\n"
    "    {\"algorithm\": \"two_level\"},\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 524289, \"algorithm\": \"rabenseifner\"},\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"algorithm\": \"binomial\"},\n"
    "    {\"comm_size_max\": 2, \"msg_size_max\": 16384, \"algorithm\": \"shm\"},\n"
    "    {\"cpu\": \"intel\", \"comm_size_min\": 3, \"comm_size_max\": 3, \"msg_size_min\": 131072, \"msg_size_max\": 4194304, \"algorithm\": \"binomial\"},\n"
    "    {\"cpu\": \"intel\", \"comm_size_min\": 4, \"comm_size_max\": 4, \"msg_size_min\": 131072, \"msg_size_max\": 262144, \"algorithm\": \"binomial\"},\n"
    "    {\"comm_size_min\": 4, \"comm_size_max\": 4, \"oversubscribed\": true, \"commutative\": true, \"bound\": true, \"msg_size_min\": 262144, \"algorithm\": \"binomial\"},\n"
    "    {\"comm_size_min\": 8, \"oversubscribed\": true, \"commutative\": true, \"bound\": true, \"msg_size_min\": 262144, \"algorithm\": \"binomial\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_max\": 262144, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 3, \"oversubscribed\": true, \"algorithm\": \"shm\"},\n"
    "    {\"msg_size_max\": 4096, \"algorithm\": \"binomial\"},\n"
    "    {\"comm_size_max\": 2, \"algorithm\": \"binomial\"},\n"
    "    {\"ppn_min\": 2, \"comm_size_max\": 8, \"algorithm\": \"binomial\"},\n"
    "    {\"algorithm\": \"rabenseifner\"}\n"
    "  ],\n"
    "  \"allreduce\": [\n"
    "    {\"algorithm\": \"two_level\"},\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 1048577, \"algorithm\": \"ring\"},\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 4097, \"algorithm\": \"recursive_doubling\"},\n"
    "    {\"msg_size_max\": 1024, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_max\": 2, \"msg_size_min\": 16385, \"algorithm\": \"recursive_doubling\"},\n"
    "    {\"msg_size_max\": 262144, \"algorithm\": \"shm_rsag\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_min\": 262145, \"oversubscribed\": true, \"algorithm\": \"cma\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_max\": 524288, \"algorithm\": \"shm_rsag\"},\n"
    "    {\"comm_size_min\": 5, \"msg_size_max\": 1048576, \"algorithm\": \"shm_rsag\"},\n"
    "    {\"comm_size_min\": 8, \"msg_size_max\": 4194304, \"algorithm\": \"shm_rsag\"},\n"
    "    {\"msg_size_max\": 4096, \"algorithm\": \"recursive_doubling\"},\n"
    "    {\"comm_size_max\": 2, \"algorithm\": \"recursive_doubling\"},\n"
    "    {\"msg_size_max\": 1048576, \"algorithm\": \"rabenseifner\"},\n"
    "    {\"algorithm\": \"ring\"},\n"
    "    {\"algorithm\": \"rabenseifner\"}\n"
    "  ],\n"
    "  \"reduce_scatter\": [\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 32769, \"msg_size_max\": 65536, \"algorithm\": \"pairwise\"},\n"
    "    {\"msg_size_max\": 65536, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 8, \"msg_size_max\": 262144, \"algorithm\": \"shm\"},\n"
    "    {\"ppn_min\": 2, \"msg_size_min\": 131072, \"algorithm\": \"pairwise\"},\n"
    "    {\"msg_size_max\": 524288, \"algorithm\": \"recursive_halving\"},\n"
    "    {\"algorithm\": \"pairwise\"}\n"
    "  ],\n"
    "  \"reduce_scatter_block\": [\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_min\": 32769, \"msg_size_max\": 65536, \"algorithm\": \"pairwise\"},\n"
    "    {\"msg_size_max\": 65536, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 8, \"msg_size_max\": 262144, \"algorithm\": \"shm\"},\n"
    "    {\"ppn_min\": 2, \"msg_size_min\": 131072, \"algorithm\": \"pairwise\"},\n"
    "    {\"msg_size_max\": 524288, \"algorithm\": \"recursive_halving\"},\n"
    "    {\"algorithm\": \"pairwise\"}\n"
    "  ],\n"
    "  \"scan\": [\n"
    "    {\"msg_size_max\": 65536, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_max\": 2, \"algorithm\": \"linear\"},\n"
    "    {\"ppn_min\": 2, \"comm_size_max\": 4, \"algorithm\": \"linear\"},\n"
    "    {\"comm_size_min\": 5, \"comm_size_max\": 8, \"msg_size_min\": 65537, \"algorithm\": \"shm_parts\"},\n"
    "    {\"comm_size_min\": 5, \"msg_size_min\": 65537, \"msg_size_max\": 524288, \"algorithm\": \"shm_parts\"},\n"
    "    {\"comm_size_min\": 5, \"msg_size_min\": 65537, \"algorithm\": \"pipeline\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_min\": 2097152, \"algorithm\": \"pipeline\"},\n"
    "    {\"ppn_min\": 2, \"comm_size_max\": 16, \"algorithm\": \"linear\"},\n"
    "    {\"algorithm\": \"recursive_doubling\"}\n"
    "  ],\n"
    "  \"exscan\": [\n"
    "    {\"cpu\": \"intel\", \"oversubscribed\": false, \"comm_size_max\": 2, \"msg_size_max\": 32768, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_max\": 2, \"msg_size_max\": 4096, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_max\": 65536, \"algorithm\": \"shm\"},\n"
    "    {\"comm_size_max\": 2, \"algorithm\": \"linear\"},\n"
    "    {\"ppn_min\": 2, \"comm_size_max\": 4, \"msg_size_min\": 131073, \"msg_size_max\": 524288, \"algorithm\": \"pipeline\"},\n"
    "    {\"comm_size_min\": 5, \"comm_size_max\": 8, \"msg_size_min\": 524289, \"msg_size_max\": 1048576, \"algorithm\": \"pipeline\"},\n"
    "    {\"comm_size_max\": 8, \"msg_size_min\": 65537, \"algorithm\": \"shm_parts\"},\n"
    "    {\"comm_size_min\": 5, \"msg_size_min\": 65537, \"msg_size_max\": 524288, \"algorithm\": \"shm_parts\"},\n"
    "    {\"comm_size_min\": 5, \"msg_size_min\": 65537, \"algorithm\": \"pipeline\"},\n"
    "    {\"comm_size_min\": 3, \"msg_size_min\": 2097152, \"algorithm\": \"pipeline\"},\n"
    "    {\"ppn_min\": 2, \"comm_size_max\": 16, \"algorithm\": \"linear\"},\n"
    "    {\"algorithm\": \"recursive_doubling\"}\n"
    "  ],\n"
    "  \"neighbor_allgather\": [{\"algorithm\": \"linear\"}],\n"
    "  \"neighbor_allgatherv\": [{\"algorithm\": \"linear\"}],\n"
    "  \"neighbor_alltoall\": [{\"algorithm\": \"linear\"}],\n"
    "  \"neighbor_alltoallv\": [{\"algorithm\": \"linear\"}],\n"
    "  \"neighbor_alltoallw\": [{\"algorithm\": \"linear\"}]\n"
    "}\n";
