#!/usr/bin/env bash
# Every shipped rule (rules/**/*.yaml) must have a numerically verified case: its name must
# appear in a tests/rules/verify_*.yaml file (as the `_rule` a rewrite stamps, or, for
# erase-style rules that leave no node behind, in a case name). Lists the rules without one
# and fails if there is any: a new rule lands with its verified case.
#
#   tests/verify/rule_coverage.sh SOURCE_DIR
set -u
src=$1
missing=0 total=0
while IFS= read -r file; do
  # Rule names: `  - name:` entries of the top-level `rules:` list (not of `tests:`).
  for rule in $(awk '/^rules:/ { r = 1; next } /^[a-z]/ { r = 0 } r && /^  - name: / { print $3 }' "$file"); do
    total=$((total + 1))
    if ! grep -qw -- "$rule" "$src"/tests/rules/verify_*.yaml; then
      echo "no verified case: ${file#"$src"/} $rule"
      missing=$((missing + 1))
    fi
  done
done < <(find "$src/rules" -name '*.yaml' | sort)
echo "$((total - missing)) of $total shipped rules have a verified case ($missing missing)"
[ $missing -eq 0 ]
