#!/usr/bin/env bash
# docs/style.md §1 and §7: pure folders read no clock, open no socket, start no thread,
# call no libuv, libpq or OpenSSL TLS, and never throw. Fails listing each hit.
set -u
root=${RW_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2

pure=(src/base src/radius src/auth src/gateway src/accounting src/submission src/bench src/deployment src/exporter src/eap src/admin src/policy src/audit)
pattern='std::chrono::(system|steady|high_resolution)_clock|[^_a-z]time\(|clock_gettime|gettimeofday|'
pattern+='[^_a-z]socket\(|recvmmsg|sendmmsg|recvfrom|sendto\(|std::thread|std::jthread|pthread_create|'
pattern+='\buv_|\bPQ[a-z]+\(|\bSSL_[a-z_]+\(|\bthrow\b|std::random_device|/dev/urandom|spdlog|fopen\(|std::[io]?fstream'

hits=$(for d in "${pure[@]}"; do [ -d "$d" ] && find "$d" -name '*.cc' -o -name '*.h'; done |
  grep -v -E '_(test|fuzz|bench)\.cc$|_main\.cc$|_for_test\.h$|/test_vectors\.h$' |
  # Loaders of configuration text may read their files (docs/style.md §1 allows it).
  grep -v -E '^src/radius/dictionary_file\.cc$' |
  # The EAP TLS engine drives OpenSSL over memory BIOs: SSL_ calls, no socket,
  # file or thread (docs/architecture.md "Layers"); its context is a loader.
  grep -v -E '^src/eap/tls_(session|server_context)\.cc$' |
  xargs -r grep -n -E "$pattern" | grep -v -E '^\S+:[0-9]+:\s*//')
if [ -n "$hits" ]; then
  echo "pure folders must not do I/O, read clocks, start threads or throw:"
  echo "$hits"
  exit 1
fi
echo "pure folders clean"
