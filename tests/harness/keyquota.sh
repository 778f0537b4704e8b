# The key-quota tests (limits-keyring.sh, limits-keyring-root.sh; source after lib.sh,
# idmapd.sh, idmap-upcall-lib.sh and faults.sh).  A real request-key upcall to
# nfskeys-upcall for an id_resolver-style "user:ID" key whose answer (a long name) costs
# more quota than the key under construction and the kernel's own upcall overheads:
#   kq_setup                  config (Kernel-Keyrings = a test keyring), the route and the
#                             helper wrapper; returns 1 when upcalls cannot be routed
#   kq_run NAME MODE FREE [REQUESTER-PREFIX...]
#                             tests/harness/keyquota-run.sh as the requester, output in
#                             $T_TMP/NAME.out (read with kq_v NAME KEY)
#   kq_check_helper_rejects NAME   the helper ran, could not instantiate, rejected (5 checks)
#   kq_check_kernel_refuses NAME   the kernel refused before any helper ran (3 checks)
#   kq_check_intact NAME      unrelated keys intact, nothing half-built, retry works (4 checks)
# Kernel accounting measured here (kernel 6.18, root and non-root alike): before the
# helper runs, the requester is charged the key (description + 1), 4 bytes for its link
# in the destination keyring, the "_req.SERIAL" keyring (15-16 bytes, may overrun) and 4
# bytes for linking the authorisation key into it (may not overrun): about 34 bytes for
# "user:ID".  The payload (the name) then needs its own length.
KQ_ID=$((4000000 + $$))
KQ_DESC="user:$KQ_ID"
KQ_NAME="kq-$$-a-name-long-enough-that-its-payload-outweighs-the-upcall-overheads@example.test"
KQ_RING="nfskeys-test-kq-ring-$$"
KQ_TTL=2 # the helper's reject timeout (Mapping Nobody-TTL)

kq_setup() {
	t_idmapd_conf "[Static]" "$KQ_NAME = $KQ_ID" "[Mapping]" "Nobody-TTL = $KQ_TTL"
	sed -i "s/^Kernel-Keyrings = .*/Kernel-Keyrings = $KQ_RING/" "$IDMAPD_CONF"
	t_upcall_wrapper "$T_TMP/helper.sh" || return 1
	t_route_upcalls "$T_TMP/helper.sh" || return 1
	chmod 755 "$T_TMP"
	chmod 644 "$IDMAPD_CONF" "$T_TMP/helper.err"
}

kq_run() { # NAME MODE FREE [PREFIX...]
	_n=$1 _m=$2 _f=$3
	shift 3
	cp "$top_srcdir/tests/harness/keyquota-run.sh" "$T_TMP/keyquota-run.sh"
	chmod 644 "$T_TMP/keyquota-run.sh"
	wc -l <"$T_TMP/helper.err" >"$T_TMP/$_n.errlines"
	KQ_MODE=$_m KQ_FREE=$_f KQ_DESC=$KQ_DESC KQ_CALLOUT=$T_CALLOUT KQ_RING=$KQ_RING \
		KQ_ORIG=${KQ_ORIG:-} KQ_RETRY_TTL=$KQ_TTL \
		"$@" keyctl session - sh "$T_TMP/keyquota-run.sh" >"$T_TMP/$_n.out" 2>&1
}

kq_v() { sed -n "s/^$2=//p" "$T_TMP/$1.out" | head -n1; }
# what the helper wrote to stderr during run NAME
kq_helper_err() { tail -n +$(($(cat "$T_TMP/$1.errlines") + 1)) "$T_TMP/helper.err"; }

kq_check_helper_rejects() {
	_f=$(kq_v "$1" free)
	check "$1: $_f bytes of quota left: room for the upcall, not for the ${#KQ_NAME}-byte answer" \
		test "${_f:-0}" -ge 34 -a "${_f:-0}" -lt ${#KQ_NAME}
	check_eq "$1: the request fails" failed "$(kq_v "$1" request)"
	check_contains "$1: ... with EDQUOT, the error the helper rejected the key with" \
		"Disk quota exceeded" "$(kq_v "$1" error)"
	check "$1: ... at once ($(kq_v "$1" ms) ms < 5000)" test "$(kq_v "$1" ms)" -lt 5000
	check_contains "$1: the helper names the key and the error" \
		"nfskeys-upcall: $KQ_DESC: cannot instantiate key $(kq_v "$1" serial): Disk quota exceeded" \
		"$(kq_helper_err "$1")"
}

kq_check_kernel_refuses() {
	check_eq "$1: the request fails" failed "$(kq_v "$1" request)"
	check_contains "$1: ... with EDQUOT from the kernel, in $(kq_v "$1" ms) ms" "Disk quota exceeded" "$(kq_v "$1" error)"
	check_eq "$1: no helper ran, no key was created" ":" \
		"$(kq_helper_err "$1"):$(kq_v "$1" key)"
}

kq_check_intact() {
	check_eq "$1: the five unrelated session keys are intact" \
		"value-1 value-2 value-3 value-4 value-5 " "$(kq_v "$1" unrelated)"
	check_eq "$1: ... and the mappings in the configured kernel keyring ($KQ_RING)" \
		"uid:bob@example.test=2003 gid:staff@example.test=3001 " "$(kq_v "$1" ringkeys)"
	# A rejected key: instantiated negative (I, N), no longer under construction (no U),
	# with the helper's short timeout rather than the kernel's 60 s; no payload to read.
	_k=$(kq_v "$1" key)
	case "$_k" in
	# no key at all is right only when the kernel refused before any helper ran; after
	# the helper ran, its rejection must have left the negative key
	'') if [ -z "$(kq_helper_err "$1")" ]; then
		ok "$1: nothing half-built (the kernel refused before any key was made)"
	else
		not_ok "$1: nothing half-built: the helper ran but left no negative key"
	fi ;;
	*) check "$1: nothing half-built: the key is negative, not under construction, and has no payload ($_k)" \
		sh -c 'case "$1" in I???-N*" "[0-9]s:*"Disk quota exceeded"*) exit 0;; esac; exit 1' \
		sh "$_k:$(kq_v "$1" read)" ;;
	esac
	check_eq "$1: once the quota is back, the same request succeeds" \
		"$(t_hex "$KQ_NAME")" "$(kq_v "$1" retry)"
	[ "$TAP_FAILED" = 0 ] || sed "s/^/# $1: /" "$T_TMP/$1.out" "$T_TMP/helper.err"
}
