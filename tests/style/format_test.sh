#!/usr/bin/env bash
# Every C++ file in the tree is clang-formatted with the repository's style.
set -u
root=${RW_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
formatter=$(command -v clang-format-14 || command -v clang-format) || { echo "clang-format not found"; exit 1; }
bad=()
while IFS= read -r f; do
  "$formatter" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(find src bench sim tests -name '*.cc' -o -name '*.h' 2>/dev/null)
if [ ${#bad[@]} -gt 0 ]; then
  echo "not clang-formatted (run: make format):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "all C++ files formatted"
