# Shared sanitizer and fuzzing settings (docs/errors.md#sanitizers-and-fuzzers).
#
# DPBUDGET_SANITIZE: every target is built with AddressSanitizer and
#   UndefinedBehaviorSanitizer, and the first report aborts the process
#   (-fno-sanitize-recover=all), so a sanitizer finding fails its test.
# DPBUDGET_FUZZ (clang only): also instruments the layers that parse input and
#   write output (report, cli) for libFuzzer's coverage feedback (dpbudget_fuzz_coverage
#   below) and builds the fuzz targets in tests/fuzz/.
option(DPBUDGET_SANITIZE "Build everything with ASan and UBSan" OFF)
option(DPBUDGET_FUZZ "Build the libFuzzer targets (clang; implies DPBUDGET_SANITIZE)" OFF)

if(DPBUDGET_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "DPBUDGET_FUZZ needs clang (-fsanitize=fuzzer): "
                        "configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  set(DPBUDGET_SANITIZE ON CACHE BOOL "Build everything with ASan and UBSan" FORCE)
endif()

if(DPBUDGET_SANITIZE)
  set(DPBUDGET_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all)
  # Line tables only: a sanitizer report's stack names file and line, which is
  # all it needs; full debug info (-g, RelWithDebInfo's) costs much of the
  # sanitizer build's time in big template instantiations.
  add_compile_options(${DPBUDGET_SANITIZER_FLAGS} -fno-omit-frame-pointer -gline-tables-only)
  # Executables not position-independent (-no-pie): a PIE binary with the
  # sanitizer runtime applies about 147,000 relocations at start, a dirty
  # page each; the sanitizer suite starts about 2,700 processes. `dpbudget
  # --version` with ASan + UBSan: 24.8 -> 17.2 ms of CPU, 4,608 -> 4,207 page
  # faults (perf stat -r 30); the suite's e2e, cli and shell cases 378 -> 361
  # CPU-s (perf stat over ctest -j2; issue 25).
  add_link_options(${DPBUDGET_SANITIZER_FLAGS} -no-pie)
endif()
# dpbudget_fuzz_coverage(TARGET): libFuzzer's coverage instrumentation for a
# library the fuzz targets link, and for the fuzz targets themselves (only
# they link libFuzzer's main). Not for the tests: their own code needs no
# coverage feedback, and its comparison tracing (trace-cmp) slowed the
# sanitizer suite's multiprecision and quadrature references several times
# over (issue 25).
function(dpbudget_fuzz_coverage target)
  if(DPBUDGET_FUZZ)
    target_compile_options(
      ${target} PRIVATE -fsanitize=fuzzer-no-link
                        -fsanitize-coverage-allowlist=${PROJECT_SOURCE_DIR}/cmake/fuzz_coverage_allowlist.txt)
  endif()
endfunction()
