#!/usr/bin/env bash
# Sets up the directory test stack (Tests/directory, docs/pam/README.md "Directory accounts"):
#   - slapd on the loopback address only (ldap://127.0.0.1:389/ and ldapi:///), with the ppolicy
#     overlay, and the test directory dc=example,dc=org from docs/pam/directory.ldif;
#   - nslcd (pam_ldap, libnss-ldapd) and SSSD (pam_sss, sssd-ldap, libnss-sss) against it, with
#     docs/pam/nslcd.conf and docs/pam/sssd.conf, and one PAM service per route
#     (teletan-portal-ldap-test, teletan-portal-sss-test);
#   - NSS: passwd, group, shadow "files systemd sss" (one directory route at a time, see below).
# The machine's /etc/pam.d/common-* stay as they were: the packages' pam-auth-update additions
# are disabled again, and the script fails if common-* still name pam_ldap or pam_sss.
# No nscd (only recommended by nslcd: --no-install-recommends).
# Usage: install-directory-stack.sh            install or reset everything
#        install-directory-stack.sh nss ROUTE  only point NSS at ROUTE: sss (SSSD) or ldap (nslcd)
# Idempotent: re-running resets the directory (entries, passwords, lock and expiry states) and
# restarts nslcd and sssd with empty caches, so tests start from the same state each time.
# Run as root on Debian 12, after scripts/install-pam-stack.sh (its local accounts are kept out
# of the directory lookups). Services are started directly (no systemd here).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [[ $EUID -ne 0 ]]; then
  echo "install-directory-stack.sh: run as root" >&2
  exit 1
fi

base=dc=example,dc=org
admin_dn=cn=admin,$base
admin_password=Directory-Admin-1   # the test directory's own administrator (tests only)
slapd_urls="ldap://127.0.0.1:389/ ldapi:///"
slapd_pidfile=/var/run/slapd/slapd.pid
nslcd_pidfile=/var/run/nslcd/nslcd.pid
sssd_pidfile=/var/run/sssd.pid

# stop_pidfile FILE: SIGTERM to the process named in FILE, wait until it is gone.
stop_pidfile() {
  local file=$1 pid
  [[ -s $file ]] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "install-directory-stack.sh: process $pid ($file) did not stop" >&2
      exit 1
    fi
  fi
  rm -f "$file"
}

# wait_for DESCRIPTION COMMAND...: retries COMMAND for up to 30 s.
wait_for() {
  local what=$1; shift
  for _ in $(seq 150); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "install-directory-stack.sh: $what not within 30 s" >&2
  exit 1
}

# ---------------------------------------------------------------------------------------------
# NSS: passwd, group and shadow ask files (and systemd), then ONE directory route: sss (SSSD, the
# default) or ldap (nslcd). Both at once would mix two caches and two spellings: getgrouplist
# merges the groups of every source (a role removed in the directory stays while SSSD's cache
# still has it), and nslcd answers only the directory's exact case where SSSD (case_sensitive =
# false) answers the lower-case name. The nslcd tests switch to ldap and back (`nss ldap`).
# libnss-sss also added sss to services, netgroup and automount: taken out again.

# use_nss_route sss|ldap
use_nss_route() {
  local route=$1 nss_new
  nss_new=$(mktemp)
  awk -v route="$route" '
    # The sources of a line without sss and ldap, separated by single spaces.
    function sources(   i, out) {
      out = ""
      for (i = 2; i <= NF; i++) if ($i != "sss" && $i != "ldap") out = out (out == "" ? "" : " ") $i
      return out
    }
    /^(passwd|group|shadow):/             { printf "%-16s%s %s\n", $1, sources(), route; next }
    /^automount:[ \t]+sss[ \t]*$/         { next }
    /^(gshadow|services|netgroup):/       { printf "%-16s%s\n", $1, sources(); next }
    { print }
  ' /etc/nsswitch.conf >"$nss_new"
  if ! cmp -s "$nss_new" /etc/nsswitch.conf; then
    cat "$nss_new" >/etc/nsswitch.conf   # in place: owner and mode stay
  fi
  rm -f "$nss_new"
}

if [[ ${1:-} == nss ]]; then
  case ${2:-} in
    sss|ldap) use_nss_route "$2"; exit 0 ;;
    *) echo "usage: install-directory-stack.sh nss sss|ldap" >&2; exit 2 ;;
  esac
fi

# ---------------------------------------------------------------------------------------------
# Packages

packages=(slapd ldap-utils nslcd libnss-ldapd libpam-ldapd sssd-ldap libpam-sss libnss-sss)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  before=$(mktemp -d)
  cp -a /etc/pam.d/common-* "$before/"
  debconf-set-selections <<'PRESEED'
slapd slapd/no_configuration boolean false
slapd slapd/domain string example.org
slapd shared/organization string teleTAN portal tests
slapd slapd/password1 password Directory-Admin-1
slapd slapd/password2 password Directory-Admin-1
slapd slapd/purge_database boolean true
slapd slapd/move_old_database boolean true
nslcd nslcd/ldap-uris string ldap://127.0.0.1/
nslcd nslcd/ldap-base string dc=example,dc=org
nslcd nslcd/ldap-auth-type select none
libnss-ldapd libnss-ldapd/nsswitch multiselect
libnss-ldapd libnss-ldapd/clean_nsswitch boolean false
PRESEED
  echo "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # As install-deps.sh: wait for the dpkg lock, retry downloads. No recommends: nslcd's
  # recommendation nscd would cache groups (docs/pam/README.md).
  apt_options=(-o DPkg::Lock::Timeout=300 -o Acquire::Retries=3)
  apt-get "${apt_options[@]}" update -q
  apt-get "${apt_options[@]}" install -y -q --no-install-recommends "${packages[@]}"
  # libpam-ldapd and libpam-sss run pam-auth-update and add pam_ldap and pam_sss to
  # /etc/pam.d/common-* (despite the preseeding); sssd-common pulls in libpam-pwquality, which
  # adds pam_pwquality. Switch off what was not there before.
  profiles=(ldap sss)
  grep -q pam_pwquality "$before/common-password" || profiles+=(pwquality)
  pam-auth-update --disable "${profiles[@]}"
  for f in "$before"/common-*; do
    if ! cmp -s "$f" "/etc/pam.d/$(basename "$f")"; then
      diff -u "$f" "/etc/pam.d/$(basename "$f")" >&2 || true
      echo "install-directory-stack.sh: /etc/pam.d/$(basename "$f") differs from before the install" >&2
      exit 1
    fi
  done
  rm -rf "$before"
fi
# Whatever happened since (a reinstall, a pam-auth-update run): common-* must not use the directory.
if grep -lE 'pam_(ldap|sss)\.so' /etc/pam.d/common-*; then
  echo "install-directory-stack.sh: the files above name pam_ldap or pam_sss; run pam-auth-update --disable ldap sss" >&2
  exit 1
fi
if dpkg-query -W -f '${Status}' nscd 2>/dev/null | grep -q 'install ok installed'; then
  echo "WARNING: nscd is installed; its caches hide directory changes (docs/pam/README.md)" >&2
fi

use_nss_route sss

# ---------------------------------------------------------------------------------------------
# slapd: loopback only, started directly

sed -i 's|^SLAPD_SERVICES=.*|SLAPD_SERVICES="ldap://127.0.0.1:389/ ldapi:///"|' /etc/default/slapd
stop_pidfile "$slapd_pidfile"
install -d -o openldap -g openldap -m 755 /var/run/slapd
/usr/sbin/slapd -h "$slapd_urls" -g openldap -u openldap -F /etc/ldap/slapd.d
wait_for "slapd" ldapsearch -x -H ldap://127.0.0.1/ -b "" -s base

config() { ldapmodify -Q -Y EXTERNAL -H ldapi:/// "$@" >/dev/null; }
config_search() { ldapsearch -Q -LLL -Y EXTERNAL -H ldapi:/// "$@"; }

# The ppolicy overlay (its schema is built in since OpenLDAP 2.5) on the mdb database.
if ! config_search -b cn=config '(objectClass=olcModuleList)' olcModuleLoad | grep -q ppolicy; then
  config <<'LDIF'
dn: cn=module{0},cn=config
changetype: modify
add: olcModuleLoad
olcModuleLoad: ppolicy
LDIF
fi
db_dn=$(config_search -b cn=config "(olcSuffix=$base)" dn | sed -n 's/^dn: //p')
if ! config_search -b "$db_dn" '(objectClass=olcPPolicyConfig)' dn | grep -q dn; then
  config -a <<LDIF
dn: olcOverlay=ppolicy,$db_dn
objectClass: olcOverlayConfig
objectClass: olcPPolicyConfig
olcOverlay: ppolicy
LDIF
fi
overlay_dn=$(config_search -b "$db_dn" '(objectClass=olcPPolicyConfig)' dn | sed -n 's/^dn: //p')
# UseLockout: a bind to a locked account says so in the ppolicy response control (SSSD reads it).
# HashCleartext: the clear-text passwords of directory.ldif are stored hashed.
config <<LDIF
dn: $overlay_dn
changetype: modify
replace: olcPPolicyDefault
olcPPolicyDefault: cn=default,ou=policies,$base
-
replace: olcPPolicyUseLockout
olcPPolicyUseLockout: TRUE
-
replace: olcPPolicyHashCleartext
olcPPolicyHashCleartext: TRUE
LDIF

# The test directory, from scratch.
admin() { local tool=$1; shift; "$tool" -x -H ldap://127.0.0.1/ -D "$admin_dn" -w "$admin_password" "$@"; }
for ou in people groups policies; do
  admin ldapdelete -r "ou=$ou,$base" 2>/dev/null || true
done
admin ldapadd -f "$repo/docs/pam/directory.ldif" >/dev/null
echo "Directory ready: $(admin ldapsearch -LLL -b "ou=people,$base" '(objectClass=posixAccount)' dn | grep -c '^dn:') users"

# ---------------------------------------------------------------------------------------------
# nslcd

install -m 640 -o root -g nslcd "$repo/docs/pam/nslcd.conf" /etc/nslcd.conf
stop_pidfile "$nslcd_pidfile"
install -d -o nslcd -g nslcd -m 755 /var/run/nslcd
/usr/sbin/nslcd
wait_for "nslcd answering" getent -s ldap passwd ldap-officer

# ---------------------------------------------------------------------------------------------
# SSSD (Debian 12's /etc/init.d/sssd fails here: "Invalid option -f"), with an empty cache

local_users=$(getent -s files passwd | cut -d: -f1 | paste -sd, - | sed 's/,/, /g')
install -m 600 -o root -g root /dev/null /etc/sssd/sssd.conf.new
sed "s/^filter_users = root\$/filter_users = $local_users/" "$repo/docs/pam/sssd.conf" >/etc/sssd/sssd.conf.new
mv /etc/sssd/sssd.conf.new /etc/sssd/sssd.conf
stop_pidfile "$sssd_pidfile"
rm -f /var/lib/sss/db/* /var/lib/sss/mc/*
/usr/sbin/sssd -D --logger=files
wait_for "sssd answering" getent -s sss passwd ldap-officer

# ---------------------------------------------------------------------------------------------
# PAM services and a check of both routes

for f in teletan-portal-ldap-test teletan-portal-sss-test; do
  install -m 644 -o root -g root "$repo/docs/pam/$f" "/etc/pam.d/$f"
done

check_route() {
  local service=$1
  if ! echo Ldap-Officer-1 | pamtester "$service" ldap-officer authenticate acct_mgmt >/dev/null 2>&1; then
    echo "install-directory-stack.sh: ldap-officer cannot sign in through $service" >&2
    exit 1
  fi
}
check_route teletan-portal-ldap-test
check_route teletan-portal-sss-test
id ldap-officer
echo "Directory stack ready: slapd, nslcd, sssd; PAM services teletan-portal-ldap-test, teletan-portal-sss-test"
