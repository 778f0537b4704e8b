# The timeout a key was given, from its own timestamps: independent of how long the
# request took or how busy the machine is.  Sourced by request-key wrappers (plain sh, no
# lib.sh) and by the tests that read what they wrote.
#
# The kernel sets a key's expiry to the wall clock's second at instantiation plus the
# timeout (key_set_expiry()), and /proc/keys shows expiry minus the current second.  A
# wrapper takes START=$(date +%s) before running the helper that instantiates key SERIAL
# and calls t_key_ttl_bounds right after it returns: the key was made between START and
# now, and its expiry is the remaining time read plus the second of the read, so its
# timeout lies between two bounds whatever the delays.
#
# A remaining time of a minute or more shows as whole minutes ("5m": 300-359 s), which
# bounds the expiry only to within 59 s.  Every read narrows the expiry (at least the
# lowest figure the read allows past its start, at most the highest past its end), so
# the reads are repeated until the figure changes ("5m" to "4m" pins the second) or
# WAIT seconds pass: a timeout of N minutes and K seconds needs K + 1 s of reads.
#
# t_key_ttl_bounds SERIAL START [WAIT]: prints "LOW HIGH" (seconds), or "none WHY" when
#   the key is not in /proc/keys, has no timeout, has already expired or its remaining
#   time is an hour or more.  WAIT (default 3): how long to read a figure in minutes.
# t_key_ttl_check WANT BOUNDS: exit 0 when WANT lies within BOUNDS ("LOW HIGH").  The
#   kernel's seconds lag date(1)'s by up to a tick, so the second of the read may be one
#   less than the one date gave just before it: one second of slack below.  (Above none:
#   the key cannot be made within a tick of the start, the helper has to be exec'd first.)
#   The bounds are as far apart as the helper ran and the reads took, rounded out to
#   whole seconds: a timeout off by more than that is always caught.

t_key_ttl_bounds() {
	_hex=$(printf %08x "$1")
	_start=$2
	_made=$(date +%s)
	_until=$((_made + ${3:-3}))
	_elo= _ehi=
	while :; do
		_r0=$(date +%s)
		_col=$(awk -v s="$_hex" '$1 == s { print $4 }' /proc/keys)
		_r1=$(date +%s)
		case "$_col" in
		[0-9]*s) _lo=${_col%s}; _hi=$_lo ;;
		[0-9]*m) _lo=$((${_col%m} * 60)); _hi=$((_lo + 59)) ;;
		'') echo "none: key $1 not in /proc/keys"; return 1 ;;
		*) echo "none: key $1 shows '$_col'"; return 1 ;;
		esac
		# expiry in [r0 + lo, r1 + hi]: keep the narrowest
		[ -z "$_elo" ] || [ $((_r0 + _lo)) -gt "$_elo" ] && _elo=$((_r0 + _lo))
		[ -z "$_ehi" ] || [ $((_r1 + _hi)) -lt "$_ehi" ] && _ehi=$((_r1 + _hi))
		[ $((_ehi - _elo)) -le 1 ] && break
		[ "$(date +%s)" -ge "$_until" ] && break
		sleep 0.1
	done
	# made in [start, made]
	echo "$((_elo - _made)) $((_ehi - _start))"
}

t_key_ttl_check() {
	_want=$1
	set -- $2
	case "$1" in none*) return 1 ;; esac
	[ "$_want" -ge $(($1 - 1)) ] && [ "$_want" -le "$2" ]
}
