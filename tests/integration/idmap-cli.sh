#!/bin/sh
# `nfskeys idmap`: lookups, reverse, SIDs, explain's causes and advice, import-conf of an
# idmapd.conf, enable-upcalls into a scratch request-key.d, flush, and exit codes.
. "$top_srcdir/tests/harness/lib.sh"
plan 52

cat >"$T_TMP/nfskeys.conf" <<CONF
[General]
Domain = cli.test
Local-Realms = CLI.TEST
[Translation]
Method = static,nsswitch,sid
[Static]
mapped@cli.test = daemon
[SID]
State-File = $T_TMP/slices
CONF
nk() { "$NFSKEYS" -c "$T_TMP/nfskeys.conf" "$@"; }

nk idmap --help >/dev/null; check_eq "idmap --help exits 0" 0 $?
nk idmap >/dev/null 2>&1; check_eq "idmap without a command exits 2" 2 $?
nk idmap frobnicate >/dev/null 2>&1; check_eq "unknown idmap command exits 2" 2 $?

out=$(nk idmap lookup root@cli.test); check_eq "lookup exits 0" 0 $?
check_eq "lookup root@cli.test" "root@cli.test -> 0 (nsswitch, ttl 600s)" "$out"
check_eq "lookup through [Static]" "mapped@cli.test -> 1 (static, ttl 600s)" "$(nk idmap lookup mapped@cli.test)"
check_eq "lookup --group" "root@cli.test -> 0 (nsswitch, ttl 600s)" "$(nk idmap lookup --group root@cli.test)"
out=$(nk idmap lookup nosuch@cli.test 2>&1); rc=$?
check_eq "unknown name exits 1" 1 $rc
check_contains "unknown name points at explain" "nfskeys idmap explain" "$out"
check_contains "--nobody gives nobody with the short TTL" "(nobody: No such file or directory; ttl 60s" \
	"$(nk idmap lookup --nobody nosuch@cli.test)"
check_eq "--json" '{"kind":"name-to-uid","key":"root@cli.test","id":0,"backend":"nsswitch","ttl":600,"nobody":false}' \
	"$(nk idmap lookup --json root@cli.test)"
check_eq "reverse 0" "0 -> root@cli.test (nsswitch, ttl 600s)" "$(nk idmap reverse 0)"
check_eq "reverse --group 0" "0 -> root@cli.test (nsswitch, ttl 600s)" "$(nk idmap reverse -g 0)"
out=$(nk idmap reverse abc 2>&1); check_contains "reverse of a non-number says so" "not a numeric id" "$out"
out=$(nk idmap reverse --local 4294967295 2>&1); rc=$?
check_eq "reverse 4294967295: out of range, not 'not a numeric id'" \
	"1 nfskeys: idmap reverse: 4294967295: out of range (an id is 0 to 4294967294; 4294967295 is (uid_t)-1, never an owner)" \
	"$rc $out"
id=$(nk idmap sid S-1-5-21-7-8-9-1234 | awk '{print $3}')
check_eq "sid -> id -> the same sid" "$id -> S-1-5-21-7-8-9-1234 (sid, ttl 600s)" "$(nk idmap sid "$id")"
out=$(nk idmap sid S-1-5-x 2>&1); check_contains "bad SID text is named" "not a SID" "$out"
check_eq "domain" "cli.test (from config)" "$(nk idmap domain)"
out=$(nk idmap domain --json)
check_eq "domain --json is JSON" "cli.test config" \
	"$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["domain"], d["source"])' 2>&1)"
out=$(nk idmap explain --json root@cli.test); rc=$?
check_eq "explain --json: exit 0" 0 "$rc"
check_eq "explain --json is one JSON object: mapped, answer, explanation" "True 0 nsswitch True" \
	"$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["mapped"], d["answer"]["id"], d["answer"]["backend"], "result: 0 (backend nsswitch" in d["explanation"])' 2>&1)"
out=$(nk idmap explain --json nosuch@cli.test); rc=$?
check_eq "explain --json of an unmapped name: exit 1, mapped false, answer null" "1 False None" \
	"$rc $(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["mapped"], d["answer"])' 2>&1)"
nk idmap explain >/dev/null 2>&1; check_eq "explain without a key: usage error (2)" 2 $?
nk idmap lookup >/dev/null 2>&1; check_eq "lookup without a key: usage error (2)" 2 $?
nk idmap import-conf --bogus >/dev/null 2>&1; check_eq "import-conf --bogus: usage error (2)" 2 $?
out=$(nk idmap explain --bogus x 2>&1); rc=$?
check_eq "an unknown option names the program: exit 2, 'nfskeys:'" "2 nfskeys: unrecognized option '--bogus'" \
	"$rc $(printf '%s' "$out" | head -1)"

# a backend that is not installed: one message naming it, the key, the file and the
# plugin directory; exit 3 before any answer; doctor names it
sed 's/^Method = .*/Method = nsswitch,bogus/' "$T_TMP/nfskeys.conf" >"$T_TMP/bogus.conf"
nb() { "$NFSKEYS" -c "$T_TMP/bogus.conf" "$@"; }
msg="nfskeys: error: unknown backend 'bogus' ([Translation] Method = nsswitch,bogus in $T_TMP/bogus.conf): no idmap-bogus.so in $NFSKEYS_PLUGIN_DIR (installed: "
out=$(nb idmap domain 2>&1); rc=$?
check_eq "missing backend: idmap domain exits 3" 3 "$rc"
check_eq "... with one message" 1 "$(printf '%s\n' "$out" | wc -l)"
check_contains "... naming backend, key, file and plugin directory" "$msg" "$out"
out=$(nb idmap lookup --local root@cli.test 2>&1); rc=$?
check_eq "missing backend: lookup --local exits 3 with the one message (not 'Host is down')" \
	"3 1" "$rc $(printf '%s\n' "$out" | grep -c "unknown backend 'bogus'")"
out=$(nb doctor 2>&1)
check_contains "doctor names the missing backend as a problem" \
	"problem config idmap: unknown backend 'bogus' ([Translation] Method = nsswitch,bogus" "$out"
check_contains "doctor says all backends are installed when they are" \
	"ok      config idmap: every backend in [Translation] Method is installed" "$(nk doctor 2>&1)"

out=$(nk idmap explain nosuch@cli.test)
check_contains "explain: no such user" "cause: no such user in any backend" "$out"
check_contains "explain: advice" "[Static] nosuch@cli.test = <local user>" "$out"
out=$(nk idmap explain root@example.com)
check_contains "explain: domain mismatch" "cause: domain mismatch: 'example.com' is not the NFSv4 domain 'cli.test'" "$out"
check_contains "explain: the line to change" "set [General] Domain = example.com" "$out"
out=$(nk idmap explain root)
check_contains "explain: a bare name points at No-Strip" "set [Translation] No-Strip = both" "$out"
check_contains "explain: a mapped name" "result: 0 (backend nsswitch" "$(nk idmap explain root@cli.test)"
check_contains "explain: a SID no backend maps is no nobody (the cifs.idmap key is rejected)" \
	"result: no mapping (the cifs.idmap key is rejected: a cifsacl mount shows its uid= or" \
	"$(nk idmap explain S-1-5-32-544)"
# a name with control bytes (here from argv; a directory's answer the same way) reaches the
# terminal escaped, in explain's text and in lookup's answer line
esc=$(printf 'evil\033[31m\nx@cli.test')
out=$(nk idmap explain "$esc" 2>&1)
check_contains "explain: a control byte in the key is shown escaped" 'evil\x1b[31m\x0ax@cli.test' "$out"
check_eq "explain: no raw ESC reaches the terminal" 0 "$(printf '%s' "$out" | tr -cd '\033' | wc -c)"
out=$(nk idmap lookup "$esc" 2>&1)
check_eq "lookup: no raw ESC reaches the terminal" 0 "$(printf '%s' "$out" | tr -cd '\033' | wc -c)"

cat >"$T_TMP/idmapd.conf" <<'IDM'
[General]
Verbosity = 0
Domain = corp.example
Local-Realms = CORP.EXAMPLE
[Mapping]
Nobody-User = nobody
Nobody-Group = nogroup
[Translation]
Method = nsswitch,umich_ldap
[Static]
alice@CORP.EXAMPLE = alice
[UMICH_SCHEMA]
NFSv4_person_objectclass = NFSv4RemotePerson
IDM
out=$(nk idmap import-conf "$T_TMP/idmapd.conf" -o "$T_TMP/imported.conf" 2>&1)
check_contains "import-conf reports what it skipped" "2 setting(s) not imported" "$out"
check_contains "umich_ldap becomes ldap" "Method = nsswitch,ldap" "$(cat "$T_TMP/imported.conf")"
check_contains "[Static] carried over" "alice@CORP.EXAMPLE = alice" "$(cat "$T_TMP/imported.conf")"
check_eq "imported file loads as nfskeys.conf" "corp.example (from config)" \
	"$("$NFSKEYS" -c "$T_TMP/imported.conf" idmap domain 2>/dev/null)"
out=$(nk idmap import-conf "$T_TMP/idmapd.conf" -o "$T_TMP/imported.conf" 2>&1)
check_contains "import-conf refuses to overwrite" "refusing to overwrite" "$out"

mkdir "$T_TMP/rk"
printf 'create\tid_resolver\t*\t*\t\t/usr/sbin/nfsidmap -t 600 %%k %%d\n' >"$T_TMP/rk/id_resolver.conf"
out=$(nk idmap enable-upcalls --dir "$T_TMP/rk" --helper /usr/sbin/nfskeys-upcall)
check_contains "enable-upcalls names the file it overrides" \
	"overrides $T_TMP/rk/id_resolver.conf: id_resolver keys (*) were handled by /usr/sbin/nfsidmap" "$out"
check_eq "enable-upcalls writes a line per description prefix" 8 \
	"$(grep -c '^create	\(id_resolver\|cifs.idmap\)	[a-z]*:\*	\*	/usr/sbin/nfskeys-upcall %k %d$' "$T_TMP/rk/nfskeys.conf")"
# flush: each kernel ID-mapping keyring is reported, as cleared when the kernel has it
# (then it is empty afterwards) and as not present only when its filesystem is not loaded
out=$(nk idmap flush 2>&1); rc=$?
check_eq "flush exits 0" 0 "$rc"
flush_state() { # RING FS: what flush must have said about RING, checked against the kernel
	if grep -qw "$2" /proc/filesystems; then
		case "$out" in *"$1: cleared"*) n=$(keyctl rlist %keyring:"$1" 2>/dev/null | wc -w)
			[ "$n" = 0 ] && echo "cleared" || echo "cleared but $n keys left" ;;
		*) echo "no 'cleared' line for $1: $out" ;; esac
	else
		case "$out" in *"$1: not present (the filesystem module is not loaded)"*) echo "cleared" ;;
		*) echo "no 'not present' line for $1: $out" ;; esac
	fi
}
check_eq "flush: .id_resolver cleared (or truthfully absent)" cleared "$(flush_state .id_resolver nfs4)"
check_eq "flush: .cifs_idmap cleared (or truthfully absent)" cleared "$(flush_state .cifs_idmap cifs)"
