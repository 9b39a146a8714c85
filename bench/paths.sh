# bench/paths.sh: sourced by the bench scripts. Sets
#   root       the source tree (this file's parent directory)
#   build      $BUILD (relative to root) or root/build
#   driver     build/bench/leasehold_loadbench
#   leasehold  build/leasehold
# Checks nothing: each script says what it needs.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$root/build}
[[ $build = /* ]] || build=$root/$build
driver=$build/bench/leasehold_loadbench
leasehold=$build/leasehold
