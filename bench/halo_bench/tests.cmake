# CTest cases for halo-bench, run under Halo's mpiexec (included from
# CMakeLists.txt when testing is on). Every case checks the exit status and
# the output's format (check_output.awk); -c makes a wrong byte a failure,
# and the inject case proves each benchmark's check can fail.
#   quick: every benchmark (`all`) with -c at small sizes on 2 and 4 ranks
#   full:  more ranks (3, 8: odd and oversubscribed), large messages
set(hb_runner ${PROJECT_SOURCE_DIR}/tests/run_mpi_test.sh)
set(hb_test ${CMAKE_CURRENT_SOURCE_DIR}/test_run.sh)

# Benchmarks in `halo-bench list`: 6 point-to-point (spawn_latency among them), 17 collectives in each
# of three families, 2 start-up, 3 datatype, 2 resources, 6 one-sided.
set(hb_all 70)

# hb_add(NAME RANKS EXPECT MODE SECTIONS LABELS ARGS...)
function(hb_add name ranks expect mode sections labels)
  add_test(NAME bench.${name}
           COMMAND ${hb_test} ${hb_runner} $<TARGET_FILE:mpiexec> $<TARGET_FILE:halo-bench>
                   ${ranks} ${expect} ${mode} ${sections} -- ${ARGN})
  set_tests_properties(bench.${name} PROPERTIES LABELS "${labels};bench" TIMEOUT 300)
endfunction()

set(hb_small -c -m 1:64 -i 3 -x 1)
hb_add(all_validated_2ranks 2 pass pass ${hb_all} quick all ${hb_small})
hb_add(all_validated_4ranks 4 pass pass ${hb_all} quick all ${hb_small})
hb_add(all_injected_error_fails 2 fail fail ${hb_all} quick all -c --inject-error -m 1:8 -i 2 -x 0)
hb_add(all_json_2ranks 2 pass json ${hb_all} quick all -c --json -m 4:16 -i 2 -x 1)
hb_add(latency_from_zero_2ranks 2 pass pass 1 quick latency -c -m 64 -i 3 -x 1)
# Its first row is the empty message, validated.
add_test(NAME bench.latency_zero_bytes_row
         COMMAND ${hb_runner} $<TARGET_FILE:mpiexec> $<TARGET_FILE:halo-bench> 2 pass 60
                 "grep=^0 +[0-9.]+ +Pass" -- latency -c --sizes 0,8 -i 3 -x 1)
set_tests_properties(bench.latency_zero_bytes_row PROPERTIES LABELS "quick;bench" TIMEOUT 90)
# multi_lat also starts at 0 bytes (as osu_multi_lat): its default sizes
# begin with the empty message, validated across two pairs.
add_test(NAME bench.multi_lat_zero_bytes_row
         COMMAND ${hb_runner} $<TARGET_FILE:mpiexec> $<TARGET_FILE:halo-bench> 4 pass 60
                 "grep=^0 +[0-9.]+ +Pass" -- multi_lat -c -m 8 -i 3 -x 1)
set_tests_properties(bench.multi_lat_zero_bytes_row PROPERTIES LABELS "quick;bench" TIMEOUT 90)
hb_add(overlap_with_tests_2ranks 2 pass pass 1 quick iallreduce -c -t 4 -f -m 4:4096 -i 5 -x 1)

# Launch timing: halo-bench starts `mpiexec -n 2 halo-bench hello` itself.
add_test(NAME bench.hello_launcher
         COMMAND ${hb_test} direct - $<TARGET_FILE:halo-bench> 0 pass pass 1 --
                 hello -c -i 2 -x 0 --launcher "$<TARGET_FILE:mpiexec> -n 2")
set_tests_properties(bench.hello_launcher PROPERTIES LABELS "quick;bench" TIMEOUT 120)

# No GPU here: -d cuda must say so and fail.
add_test(NAME bench.cuda_without_gpu_fails
         COMMAND ${hb_runner} $<TARGET_FILE:mpiexec> $<TARGET_FILE:halo-bench> 2 fail 60
                 "grep=no GPU" -- latency -d cuda)
set_tests_properties(bench.cuda_without_gpu_fails PROPERTIES LABELS "quick;bench" TIMEOUT 90)

# full tier
hb_add(all_validated_3ranks 3 pass pass ${hb_all} full all -c -m 1:65536 -i 4 -x 1)
hb_add(all_validated_8ranks 8 pass pass ${hb_all} full all -c -m 1:16384 -i 3 -x 1)
hb_add(pt2pt_large_validated 2 pass pass 3 full latency,bw,bibw -c -m 1:4M -i 3 -x 1 -W 8)
hb_add(multi_pair_validated_4ranks 4 pass pass 2 full mbw_mr,multi_lat -c -p 2 -W 16 -m 1:1M -i 3 -x 1)
