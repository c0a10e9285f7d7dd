#!/usr/bin/env bash
# Builds the Debian packages teletan-portal and teletan-verification-server into dist/.
# Usage: scripts/package-deb.sh           makes the release build it needs
#                                         (swift build -c release --static-swift-stdlib), then packages it
#        scripts/package-deb.sh BIN_DIR   packages BIN_DIR/portal and BIN_DIR/verification-server of an
#                                         existing build made with --static-swift-stdlib (CI: scripts/test.sh,
#                                         `swift build --static-swift-stdlib --scratch-path .build-static`)
# The binaries must carry the Swift runtime (--static-swift-stdlib): the script fails if one needs
# a library of the toolchain. The version is the one `portal --version` prints
# (Sources/CommandSupport/Release.swift). Contents: docs/deployment.md sections 1, 2 and 5, and
# the files the guide takes from /usr/share/teletan-portal/;
# tested by Tests/package. Debian's tools only (dpkg-deb, dpkg-shlibdeps, help2man, strip).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if (($# > 1)); then
  echo "usage: scripts/package-deb.sh [BIN_DIR]" >&2
  exit 64
fi
if (($# == 1)); then
  bin_dir=$(cd "$1" && pwd)
else
  swift build -c release --static-swift-stdlib --product portal
  swift build -c release --static-swift-stdlib --product verification-server
  bin_dir=$(swift build -c release --static-swift-stdlib --show-bin-path)
fi

# The hourly checkpoint units (section 9); packaged when present.
checkpoint_units=(docs/deploy/teletan-portal-checkpoint.service docs/deploy/teletan-portal-checkpoint.timer)

fail() { echo "package-deb.sh: $*" >&2; exit 1; }

# A host without the toolchain has none of its libraries: every one must be linked in.
for program in portal verification-server; do
  [[ -x $bin_dir/$program ]] || fail "$bin_dir/$program: no such executable"
  toolchain_libraries=$(ldd "$bin_dir/$program" | grep -E 'not found|/opt/swift|libswift|libFoundation|lib_FoundationICU|libdispatch|libBlocksRuntime' || true)
  if [[ -n $toolchain_libraries ]]; then
    fail "$bin_dir/$program needs libraries of the Swift toolchain (build with --static-swift-stdlib):
$toolchain_libraries"
  fi
done

version=$("$bin_dir/portal" --version | awk '{ print $2 }')
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "portal --version: no version in '$("$bin_dir/portal" --version)'"
[[ $("$bin_dir/verification-server" --version | awk '{ print $2 }') == "$version" ]] \
  || fail "portal and verification-server are of different versions"
architecture=$(dpkg --print-architecture)
maintainer="teleTAN portal maintainers <maintainers@users.noreply.a-seed-7721a864.example>"
# Reproducible: dates (changelog, file times in the archive) from the commit, not the clock.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p dist

# stage PACKAGE PROGRAM SUMMARY: the parts both packages have (binary, manual page, docs, DEBIAN).
stage() {
  local package=$1 program=$2 summary=$3 root=$work/$1
  install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/doc/$package" \
    "$root/lib/systemd/system" "$root/usr/share/lintian/overrides"
  install -m 755 "$bin_dir/$program" "$root/usr/bin/$program"
  # What dh_strip does: no symbols, no debug information in the package.
  strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/$program"
  help2man --no-info --no-discard-stderr --name="$summary" "$root/usr/bin/$program" \
    | gzip -9n >"$root/usr/share/man/man1/$program.1.gz"
  {
    echo "$package ($version) unstable; urgency=medium"
    echo
    echo "  * Release $version; the changes are in CHANGELOG.md of the source."
    echo
    echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
  } | gzip -9n >"$root/usr/share/doc/$package/changelog.gz"
  install -m 644 "$repo/scripts/debian/copyright" "$root/usr/share/doc/$package/copyright"
  install -m 644 "$repo/scripts/debian/$package.lintian-overrides" "$root/usr/share/lintian/overrides/$package"
  for script in postinst prerm postrm; do
    if [[ -e $repo/scripts/debian/$package.$script ]]; then
      install -m 755 "$repo/scripts/debian/$package.$script" "$root/DEBIAN/$script"
    fi
  done
}

# control PACKAGE DESCRIPTION...: Depends from the libraries the binary links (dpkg-shlibdeps).
control() {
  local package=$1 root=$work/$1 depends
  shift
  mkdir -p "$work/shlibs/debian"
  printf 'Source: teletan-portal\n\nPackage: %s\nArchitecture: any\n' "$package" >"$work/shlibs/debian/control"
  local binaries=("$root"/usr/bin/*)
  depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "${binaries[@]/#/-e}" | sed -n 's/^shlibs:Depends=//p')
  {
    echo "Package: $package"
    echo "Version: $version"
    echo "Architecture: $architecture"
    echo "Maintainer: $maintainer"
    echo "Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)"
    # ca-certificates: the system's trust store (/etc/ssl/certs) for PostgreSQL's sslmode=verify-full
    # and https peers; without it every certificate check fails.
    echo "Depends: adduser, ca-certificates, $depends"
    echo "Section: net"
    echo "Priority: optional"
    printf 'Description: %s\n' "$1"
    shift
    for line in "$@"; do printf ' %s\n' "${line:-.}"; done
  } >"$root/DEBIAN/control"
  # Conffiles are the files under /etc; dpkg keeps an operator's changes on upgrade.
  (cd "$root" && find etc -type f -printf '/%p\n' | sort) >"$root/DEBIAN/conffiles"
  [[ -s $root/DEBIAN/conffiles ]] || rm "$root/DEBIAN/conffiles"
  (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
  # xz level 1: seconds instead of minutes for these large binaries, for a few MB more.
  dpkg-deb --root-owner-group -Zxz -z1 --build "$root" "dist/${package}_${version}_${architecture}.deb" >/dev/null
  echo "dist/${package}_${version}_${architecture}.deb"
}

# The portal.
root=$work/teletan-portal
stage teletan-portal portal "health-authority portal for issuing teleTANs"
install -m 644 docs/deploy/teletan-portal.service docs/deploy/teletan-portal@.service "$root/lib/systemd/system/"
for unit in "${checkpoint_units[@]}"; do
  if [[ -e $unit ]]; then
    install -m 644 "$unit" "$root/lib/systemd/system/"
  else
    echo "package-deb.sh: warning: $unit missing, not packaged" >&2
  fi
done
install -d "$root/etc/pam.d" "$root/etc/teletan-portal"
install -m 644 docs/pam/teletan-portal "$root/etc/pam.d/teletan-portal"
# What the guide installs or runs from here (docs/deployment.md names these paths): the nginx
# site and its error pages (the site's default alias), the examples, the backup and restore
# scripts, PostgreSQL's archiving settings and the WAL receiver's unit, the alert rules with
# their tests, the PAM file with its notes (never the *-test files).
share=$root/usr/share/teletan-portal
install -d "$share/proxy-errors" "$share/pam"
install -m 644 docs/deploy/nginx-teletan-portal.conf docs/deploy/alerts.yml docs/deploy/alerts.test.yml \
  docs/deploy/postgresql-archiving.conf docs/deploy/postgresql-synchronous-wal.conf \
  docs/deploy/teletan-wal-receiver.service docs/health-authorities.example.csv \
  docs/hotline-checks.example.json "$share/"
install -m 755 docs/deploy/backup-sqlite.sh docs/deploy/backup-pg-dump.sh docs/deploy/pg-base-backup.sh \
  docs/deploy/pg-restore-base-backup.sh "$share/"
install -m 644 docs/deploy/proxy-errors/*.html "$share/proxy-errors/"
install -m 644 docs/pam/teletan-portal docs/pam/README.md docs/pam/sssd.conf docs/pam/nslcd.conf "$share/pam/"
# Root only: it will hold the database password (systemd reads it before dropping privileges).
install -m 600 docs/deploy/portal.env "$root/etc/teletan-portal/portal.env"
control teletan-portal "teleTAN portal for health authorities (Corona-Warn-App)" \
  "A web portal where a health authority's officers and hotline agents, signed in" \
  "through PAM, issue teleTANs for the Corona-Warn-App; with an append-only audit" \
  "trail and its signed checkpoints. Runs as the system user teletan-portal under" \
  "systemd: teletan-portal.service, or teletan-portal@.service for several" \
  "instances on one host."

# The standalone verification server.
root=$work/teletan-verification-server
stage teletan-verification-server verification-server "CWA-compatible teleTAN verification server"
install -m 644 docs/deploy/teletan-verification.service "$root/lib/systemd/system/"
install -d "$root/etc/teletan-verification"
install -m 600 docs/deploy/verification.env "$root/etc/teletan-verification/verification.env"
control teletan-verification-server "teleTAN verification server (Corona-Warn-App v1 API)" \
  "The verification server of the Corona-Warn-App's v1 API: teleTAN, registration" \
  "token, TAN, verification. The teleTAN portal embeds the same code; this package" \
  "runs it standalone as the system user teletan-verification under systemd."
