#!/usr/bin/env bash
# release-tag.sh check|tag VERSION: the git side of `make release VERSION=vX.Y.Z`.
#
# `go get github.com/krtt-dev/krtt@vX.Y.Z` resolves the version from a git tag
# of that name, so a release is a tag on the commit its manifests were
# rendered from. `check` refuses what would make the tag lie or be unusable,
# before anything is written; `tag` then makes the annotated tag. Nothing is
# ever pushed: publishing stays a deliberate step (the command is printed).
#
# The examples/ module is not tagged: it builds against this checkout through
# its replace directive and is not published (see docs/operating.md).
set -euo pipefail

usage() { echo "usage: $0 check|tag VERSION" >&2; exit 2; }
[ $# -eq 2 ] || usage
step=$1 version=$2

# Go reads only vMAJOR.MINOR.PATCH tags as releases of the module; a
# pre-release or build suffix would be a version nobody means to publish here.
if ! [[ $version =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]]; then
  echo "release: VERSION '$version' is not vMAJOR.MINOR.PATCH (e.g. v0.3.0)" >&2
  exit 1
fi
major=${BASH_REMATCH[1]}

root=$(git rev-parse --show-toplevel)
module=$(awk '$1 == "module" { print $2; exit }' "$root/go.mod")
# From v2 on, Go finds a version only under a module path ending in /vN.
if [ "$major" -ge 2 ] && [ "${module##*/}" != "v$major" ]; then
  echo "release: $version needs the module path to end in /v$major (go.mod says $module)" >&2
  exit 1
fi

head=$(git rev-parse HEAD)
existing=""
if git rev-parse -q --verify "refs/tags/$version" >/dev/null; then
  existing=$(git rev-parse "refs/tags/$version^{commit}")
  if [ "$existing" != "$head" ]; then
    echo "release: tag $version already names $existing, not HEAD ($head)" >&2
    exit 1
  fi
fi

case $step in
check)
  # A dirty tree would render manifests (and build an image) from something
  # the tag does not hold; untracked files count, as the image build copies them.
  dirty=$(git status --porcelain)
  if [ -n "$dirty" ]; then
    echo "release: the working tree is not clean; commit or stash first:" >&2
    echo "$dirty" >&2
    exit 1
  fi
  ;;
tag)
  if [ -n "$existing" ]; then
    echo "release: HEAD is already tagged $version"
  else
    git tag -a "$version" -m "krtt $version" HEAD
    echo "release: tagged HEAD ($head) $version"
  fi
  echo "release: publish it with: git push origin $version"
  ;;
*)
  usage
  ;;
esac
