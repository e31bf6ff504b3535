# Sourced by the corpus scripts: Debian packages downloaded (apt-get download, no root needed
# unless the package lists must be refreshed first) and unpacked under DIR/x.
# Usage: unpack_debs DIR PACKAGE...
unpack_debs() {
  local dir=$1
  shift
  (cd "$dir" && apt-get download -qq "$@" >/dev/null 2>&1) || {
    apt-get update -qq && (cd "$dir" && apt-get download -qq "$@")
  }
  local deb
  for deb in "$dir"/*.deb; do dpkg -x "$deb" "$dir/x"; done
}
