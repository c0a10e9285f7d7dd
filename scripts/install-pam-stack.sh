#!/usr/bin/env bash
# Sets up the local PAM stack for the demo and the tests:
#   - role groups teletan-officer/-hotline/-event/-admin,
#   - demo and test accounts (no home, no login shell), with known passwords,
#   - the PAM service files from docs/pam/ in /etc/pam.d,
#   - the HOTP token file for tt-otp, owned by the service account tt-portal-svc (a portal
#     that runs as its own user, as a packaged one does, must own that file and its directory).
# Idempotent: re-running resets every password, group list, aging/expiry state
# and the HOTP counter, so tests start from the same state each time.
# Run as root on Debian 12 (after scripts/install-deps.sh).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [[ $EUID -ne 0 ]]; then
  echo "install-pam-stack.sh: run as root" >&2
  exit 1
fi

for g in teletan-officer teletan-hotline teletan-event teletan-admin; do
  getent group "$g" >/dev/null || groupadd "$g"
done

passwords=()   # "user:password" lines for one chpasswd call
states=()      # "user state" pairs, applied after chpasswd

# add_account USER PASSWORD GROUPS(comma-separated, may be empty) [STATE]
# STATE: normal (default), expired (account expired), pwchange (must change password)
add_account() {
  local user=$1 pass=$2 groups=$3 state=${4:-normal}
  if ! id "$user" >/dev/null 2>&1; then
    useradd -M -s /usr/sbin/nologin -c "teleTAN portal demo/test account" "$user"
  fi
  usermod -s /usr/sbin/nologin -G "$groups" "$user"   # -G "" clears the groups
  passwords+=("$user:$pass")
  states+=("$user $state")
}

# Demo accounts (README).
add_account demo-officer Demo-Pass-2026 teletan-officer
add_account demo-hotline Demo-Pass-2026 teletan-hotline
add_account demo-event   Demo-Pass-2026 teletan-event,teletan-officer
add_account demo-event2  Demo-Pass-2026 teletan-event
add_account demo-admin   Demo-Pass-2026 teletan-admin
add_account demo-norole  Demo-Pass-2026 ""

# Test accounts.
add_account tt-officer  Officer-Pass-1 teletan-officer
add_account tt-hotline  Hotline-Pass-1 teletan-hotline
add_account tt-event    Event-Pass-1   teletan-event
# Second agent and second event officer: taking one callback at once, the four-eyes rule.
add_account tt-hotline2 Hotline-Pass-2 teletan-hotline
add_account tt-event2   Event-Pass-2   teletan-event
add_account tt-admin    Admin-Pass-1   teletan-admin
add_account tt-norole   Norole-Pass-1  ""
add_account tt-expired  Expired-Pass-1 teletan-officer expired
add_account tt-pwchange Change-Pass-1  teletan-officer pwchange
add_account tt-otp      Otp-Pass-1     teletan-officer
for i in $(seq -w 1 50); do
  add_account "tt-bench-$i" Bench-Pass-1 teletan-officer
done
# Hotline agents for the soak (scripts/soak.sh), next to the officers above.
for i in $(seq -w 1 50); do
  add_account "tt-hotbench-$i" Bench-Pass-1 teletan-hotline
done

printf '%s\n' "${passwords[@]}" | chpasswd

# Aging after chpasswd (which sets the last change to today). -M 99999, -I -1
# and -E -1 keep the normal accounts from ever expiring.
today=$(date +%F)
for entry in "${states[@]}"; do
  read -r user state <<<"$entry"
  case $state in
    normal)   chage -d "$today" -m 0 -M 99999 -I -1 -E -1 "$user" ;;
    expired)  chage -d "$today" -m 0 -M 99999 -I -1 -E 0 "$user" ;;  # account expired
    pwchange) chage -d 0 -m 0 -M 99999 -I -1 -E -1 "$user" ;;        # must change password
  esac
done
echo "Accounts ready: ${#passwords[@]}"

# A group as large as a directory group can be (12,000 member names, ~180 KB in /etc/group), with
# tt-hotline among them: NSS needs a bigger buffer than the first one for it (ERANGE, retried).
# The other names need no accounts: /etc/group is read as it is.
if ! getent group teletan-wide-test >/dev/null; then
  groupadd teletan-wide-test
fi
wide_members=$(mktemp)
{ seq -f 'tt-member-%05g' 1 12000 | paste -sd, - | tr -d '\n'; printf ',tt-hotline\n'; } >"$wide_members"
awk -F: -v OFS=: -v file="$wide_members" 'BEGIN { getline members < file }
  $1 == "teletan-wide-test" { $4 = members } { print }' /etc/group >/etc/group.teletan-new
cat /etc/group.teletan-new >/etc/group   # rewrites in place: owner and mode stay
rm -f /etc/group.teletan-new "$wide_members"

# PAM service files.
for f in teletan-portal teletan-portal-test teletan-portal-otp-test teletan-portal-hang-test teletan-portal-broken-test; do
  install -m 644 -o root -g root "$repo/docs/pam/$f" "/etc/pam.d/$f"
done

# The hanging directory of teletan-portal-hang-test: sleeps, then lets pam_unix decide.
install -d -m 755 /usr/local/lib/teletan-portal-test
cat >/usr/local/lib/teletan-portal-test/pam-hang.new <<'SCRIPT'
#!/bin/sh
seconds=$(cat /etc/teletan-portal-test/hang-seconds 2>/dev/null || echo 30)
exec sleep "$seconds"
SCRIPT
chmod 755 /usr/local/lib/teletan-portal-test/pam-hang.new
mv /usr/local/lib/teletan-portal-test/pam-hang.new /usr/local/lib/teletan-portal-test/pam-hang

install -d -m 755 /etc/teletan-portal-test
rm -f /etc/teletan-portal-test/users.oath   # where earlier versions kept the token file

# The tests' stand-in for the packaged portal's system user: a portal run as tt-portal-svc reads
# /etc/shadow through group shadow (pam_unix) and owns the HOTP token file (pam_oath).
if ! id tt-portal-svc >/dev/null 2>&1; then
  useradd --system -M -d /var/lib/teletan-portal-test -s /usr/sbin/nologin -c "teleTAN portal test service" tt-portal-svc
fi
usermod -a -G shadow tt-portal-svc

# HOTP token of tt-otp (RFC 4226 test secret "12345678901234567890"), counter 0.
# Format: HOTP user pin secret-hex [counter [time]]; "-" means no PIN. pam_oath rewrites the file
# after each code (new counter): it locks it with a lock file beside it and gives the new file the
# old one's owner and group, so the portal's user must own both the file and the directory.
install -d -m 700 -o tt-portal-svc -g tt-portal-svc /var/lib/teletan-portal-test
printf 'HOTP tt-otp - 3132333435363738393031323334353637383930\n' \
  | install -m 600 -o tt-portal-svc -g tt-portal-svc /dev/stdin /var/lib/teletan-portal-test/users.oath

if [[ -e /lib/x86_64-linux-gnu/security/pam_oath.so ]] \
   || find /lib /usr/lib -name pam_oath.so 2>/dev/null | grep -q .; then
  echo "pam_oath.so found; PAM services installed."
else
  echo "ERROR: pam_oath.so not found; run scripts/install-deps.sh (libpam-oath)" >&2
  exit 1
fi
