#!/usr/bin/env bash
# docs_test: product text speaks of the product. Fails on work-log words (a numbered session
# or issue, a paper named "seed 00N" in prose or in an identifier, "the dissertation" for a
# cited paper, a particular lab VM, a DESIGN.md that does not exist) in the README, docs/,
# CHANGELOG.md, the CLI's help and the code's comments; on a README over 250 lines or a
# docs/performance.md over 500; on bench/report.sh's markers out of balance; and on a relative
# Markdown link to a file that does not exist.
# Usage: docs_test.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: docs_test.sh SOURCE_DIR}
cd "$root" || exit 2
fails=0

# Papers are cited by author and year (docs/references.md), machines by class and CPU.
banned='[Ss]ession [0-9]|\b[Ss]eeds?[ _]?00[0-4]|\b[Tt]he dissertation\b|\b[Ii]ssues? #?[0-9]|\b(this|the|2-core) VM\b|DESIGN\.md'
hits=$(grep -rn -E "$banned" README.md CHANGELOG.md docs python/README.md \
  codes ir_builders jit runtime tools bench scripts package python test .ci CMakeLists.txt \
  --include='*.md' --include='*.cpp' --include='*.h' --include='*.c' --include='*.sh' \
  --include='*.py' --include='*.txt' --include='*.cmake' --include='*.in' --include='run' 2>/dev/null |
  grep -v '^test/docs_test.sh:')
if [[ -n $hits ]]; then
  echo "FAIL: work-log words in product text (cite papers by author and year, machines by class):"
  echo "$hits" | head -n 40
  fails=$((fails + 1))
fi

# The front page and the performance reference stay readable: README.md at most 250 lines,
# docs/performance.md at most 500.
for limit in README.md:250 docs/performance.md:500; do
  file=${limit%%:*} max=${limit##*:}
  lines=$(wc -l <"$file")
  if ((lines > max)); then
    echo "FAIL: $file has $lines lines, more than $max"
    fails=$((fails + 1))
  fi
done

# bench/report.sh rewrites what lies between its markers: each begin has its end, in order, once.
for md in README.md docs/performance.md; do
  bad=$(grep -n -o -E '<!-- report(-summary)?:[a-z0-9:-]+ (begin|end) -->' "$md" |
    sed -E 's/^([0-9]+):<!-- ([^ ]+) ([a-z]+) -->$/\1 \2 \3/' | awk '
    $3 == "begin" { if (open != "") print "line " $1 ": " $2 " begins inside " open; open = $2; seen[$2]++; next }
    { if (open != $2) print "line " $1 ": " $2 " ends but " (open == "" ? "nothing" : open) " is open"; open = "" }
    END { if (open != "") print open " never ends"
          for (k in seen) if (seen[k] > 1) print k " appears " seen[k] " times" }')
  if [[ -n $bad ]]; then
    echo "FAIL: $md has unbalanced report markers:"
    echo "$bad"
    fails=$((fails + 1))
  fi
done

# Every relative link of every Markdown file resolves (anchors are not checked).
while IFS= read -r md; do
  dir=$(dirname "$md")
  while IFS= read -r target; do
    target=${target%%#*}
    [[ -z $target ]] && continue
    if [[ ! -e $dir/$target ]]; then
      echo "FAIL: $md links to $target, which does not exist"
      fails=$((fails + 1))
    fi
  done < <(grep -o -E '\]\([^)# ]+(#[^)]*)?\)' "$md" | sed -E 's/^\]\(//; s/\)$//' | grep -v -E '^[a-z]+:')
done < <(find . -name '*.md' -not -path './build*' -not -path './.git/*' -not -path '*/target/*' \
  -not -path '*/node_modules/*' -not -path './python/.venv*')

if ((fails)); then
  echo "$fails docs check(s) failed"
  exit 1
fi
echo "docs: no work-log words, every relative link resolves"
