# Third-party samplers through the exec: protocol (issue 13): PyTorch's primitives and Hugging
# Face transformers' own logits processors (adapters/thirdparty/torch, .../transformers), run by
# the python of the virtual environment .ci/install-deps makes. Each certification pins the
# sampler's failures in its expectations file (README.md there explains each). Without torch /
# transformers the tests skip (77), and fail under CI=true (tests/thirdparty_python_test.py).
set(SAMPCERT_THIRDPARTY_PYTHON /opt/sampcert-thirdparty/venv/bin/python
    CACHE FILEPATH "python of the virtual environment with torch and transformers")
set(tp_dir ${PROJECT_SOURCE_DIR}/adapters/thirdparty)
add_test(NAME python.thirdparty_adapters
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/thirdparty_python_test.py
                 --unittest ${SAMPCERT_THIRDPARTY_PYTHON} torch ${tp_dir}/torch)
set_tests_properties(python.thirdparty_adapters PROPERTIES
                     LABELS "python;thirdparty" SKIP_RETURN_CODE 77 TIMEOUT 300)
# Direct probes of transformers (its warpers, generate, the speculative-decoding verifier) and of
# JAX, outside sampcert: the mechanisms their findings.json files name.
add_test(NAME python.thirdparty_verifier_probes
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/thirdparty_python_test.py
                 --unittest ${SAMPCERT_THIRDPARTY_PYTHON} torch,transformers ${tp_dir}/transformers)
set_tests_properties(python.thirdparty_verifier_probes PROPERTIES
                     LABELS "python;thirdparty;verify" SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME python.thirdparty_jax_probes
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/thirdparty_python_test.py
                 --unittest ${SAMPCERT_THIRDPARTY_PYTHON} jax ${tp_dir}/jax)
set_tests_properties(python.thirdparty_jax_probes PROPERTIES
                     LABELS "python;thirdparty" SKIP_RETURN_CODE 77 TIMEOUT 300)
# The certifications run in the dev build only: what they test is Python code that no sanitizer
# instruments, and the host's exec: path is the sanitizer build's already
# (exec.protocol_and_broken_samplers, conformance.exec_numpy_example.quick); twice would add
# about 8 minutes to .ci/run for nothing.
if(SAMPCERT_SANITIZE)
  return()
endif()
# name | server | modules | expectations | server arguments. Each runs the quick profile in
# ctest (and so in CI) against EXPECTATIONS; -DSAMPCERT_THIRDPARTY_STANDARD=ON adds the standard
# profile of the torch and transformers runs, against the same name with .standard.json (docs/thirdparty.md:
# their times; the six together take about 18 minutes of two cores, a third of .ci/run). JAX has
# no standard run: its categorical draws V Gumbel numbers per draw (about 50 ns per token here),
# so the standard profile's millions of draws on planned rows would take most of an hour.
# adapters/thirdparty/findings.py's CERTIFICATIONS lists the same runs: it writes their
# expectations files from their reports. None of these runs is serial: their verdicts depend on
# CPU time, never on load (REPRO-1), and their item limit is 1200 CPU-s, so ctest fills the core
# a run's last item leaves idle with other tests (COST: the longest start first, on a fresh
# clone without ctest's cost data too).
set(tp_certifications
    "torch|torch/torch_sampler.py|torch|torch/expectations|"
    "torch_f16|torch/torch_sampler.py|torch|torch/expectations_f16|--dtype f16"
    "torch_bf16|torch/torch_sampler.py|torch|torch/expectations_bf16|--dtype bf16"
    # torch.multinomial(p, 1), as transformers' generate calls it per token (issue 36 point 2).
    "torch_step|torch/torch_sampler.py|torch|torch/expectations_step|--draws step"
    "torch_step_f16|torch/torch_sampler.py|torch|torch/expectations_step_f16|--dtype f16 --draws step"
    "torch_step_bf16|torch/torch_sampler.py|torch|torch/expectations_step_bf16|--dtype bf16 --draws step"
    "transformers|transformers/hf_sampler.py|torch,transformers|transformers/expectations|"
    "transformers_f16|transformers/hf_sampler.py|torch,transformers|\
transformers/expectations_f16|--dtype f16"
    "transformers_bf16|transformers/hf_sampler.py|torch,transformers|\
transformers/expectations_bf16|--dtype bf16"
    "jax|jax/jax_sampler.py|jax|jax/expectations|"
    "jax_bf16|jax/jax_sampler.py|jax|jax/expectations_bf16|--dtype bf16")
# categorical(..., mode="high"), JAX's other Gumbel path: its quick run costs about 310 CPU-s (the
# noise costs twice the default's), more than CI's budget has room for, so it is registered with
# the standard runs only (adapters/thirdparty/jax/README.md: its results, and the default mode's
# deep tail decided at --draw-time 150).
if(SAMPCERT_THIRDPARTY_STANDARD)
  list(APPEND tp_certifications "jax_high|jax/jax_sampler.py|jax|jax/expectations_high|--mode high")
endif()
foreach(entry IN LISTS tp_certifications)
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 name)
  list(GET fields 1 server)
  list(GET fields 2 modules)
  list(GET fields 3 expect)
  list(LENGTH fields n)
  set(extra "")
  if(n GREATER 4)
    list(GET fields 4 extra)
    separate_arguments(extra UNIX_COMMAND "${extra}")
  endif()
  set(profiles quick)
  # JAX has no standard run (above); the step variants have no standard expectations yet.
  if(SAMPCERT_THIRDPARTY_STANDARD AND NOT name MATCHES "^jax|_step")
    list(APPEND profiles standard)
  endif()
  foreach(profile IN LISTS profiles)
    set(expect_file ${tp_dir}/${expect}.json)
    set(cost 100)
    if(profile STREQUAL "standard")
      set(expect_file ${tp_dir}/${expect}.standard.json)
      set(cost 300)
    endif()
    add_test(NAME conformance.thirdparty.${name}.${profile}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/thirdparty_python_test.py
                     $<TARGET_FILE:sampcert> ${SAMPCERT_THIRDPARTY_PYTHON} ${modules}
                     ${tp_dir}/${server} ${expect_file}
                     ${CMAKE_CURRENT_BINARY_DIR}/thirdparty/${name}.${profile} ${profile} ${extra})
    set_tests_properties(conformance.thirdparty.${name}.${profile} PROPERTIES
                         LABELS "thirdparty;conformance;python;${profile}" SKIP_RETURN_CODE 77
                         TIMEOUT 1800 FIXTURES_SETUP thirdparty_reports COST ${cost})
  endforeach()
endforeach()

# PEN-SEQ-1's sequences of calls (properties/penalty_sequence_test.cc, RapidCheck seeds 1-3) on
# transformers' RepetitionPenaltyLogitsProcessor: each step's input_ids are the prompt plus the
# tokens transformers drew, over exec (about 16 s). Without the venv it skips (77), and fails
# under CI=true as the certifications above do.
if(TARGET penalty_sequence_test)
  add_test(NAME thirdparty.transformers.penalty_sequences
           COMMAND sh -c "[ -x \"$1\" ] || { [ \"$CI\" = true ] && exit 1; exit 77; }; \
exec \"$2\" --gtest_filter=PenaltySequence.SamplerFromTheEnvironment"
                   sh ${SAMPCERT_THIRDPARTY_PYTHON} $<TARGET_FILE:penalty_sequence_test>)
  set_tests_properties(thirdparty.transformers.penalty_sequences PROPERTIES
                       ENVIRONMENT
                       "SAMPCERT_PENALTY_SEQUENCE_SAMPLER=exec:${SAMPCERT_THIRDPARTY_PYTHON} ${tp_dir}/transformers/hf_sampler.py"
                       LABELS "thirdparty;penalties;python" TIMEOUT 300 SKIP_RETURN_CODE 77
                       # A filter that names no test passes silently: exactly one must pass.
                       PASS_REGULAR_EXPRESSION "\\[  PASSED  \\] 1 test\\.")
endif()

# The expectations files above and the findings table of docs/thirdparty.md are what findings.py makes of these
# runs' reports and each adapter's findings.json (every finding with its direct probe, run by
# python.thirdparty_adapters / python.thirdparty_probes): a difference fails.
set(findings_profiles quick)
if(SAMPCERT_THIRDPARTY_STANDARD)
  set(findings_profiles quick,standard)
endif()
add_test(NAME docs.thirdparty_findings
         COMMAND ${Python3_EXECUTABLE} ${tp_dir}/findings.py check ${PROJECT_BINARY_DIR}
                 --profiles ${findings_profiles})
set_tests_properties(docs.thirdparty_findings PROPERTIES LABELS "thirdparty;docs"
                     FIXTURES_REQUIRED thirdparty_reports TIMEOUT 300 SKIP_RETURN_CODE 77)

# transformers' speculative-decoding verifier (_speculative_sampling, issue 20): the verifier
# family (f32/verify, quick) against its findings file, each finding probed by the test above.
add_test(NAME conformance.thirdparty.transformers_verifier.quick
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/thirdparty_verifier_test.py
                 $<TARGET_FILE:sampcert> ${SAMPCERT_THIRDPARTY_PYTHON} torch,transformers
                 ${tp_dir}/transformers/hf_verifier.py
                 ${tp_dir}/transformers/verifier_findings.json
                 ${CMAKE_CURRENT_BINARY_DIR}/thirdparty/transformers_verifier)
set_tests_properties(conformance.thirdparty.transformers_verifier.quick PROPERTIES
                     LABELS "thirdparty;conformance;python;verify" SKIP_RETURN_CODE 77
                     TIMEOUT 900 RUN_SERIAL ON)
