# Host side of the real-kernel test bed (sourced by tests/kernel/vm-run): fetch a Debian
# kernel (6.1 by default; NFSKEYS_KERNEL_SUITE for another suite's) into a cache under the
# build tree, build a small initramfs (static busybox, the modules the tests need,
# tests/kernel/guest-init as /init) and boot it under QEMU with the host's / shared
# read-only over virtio-9p.  See doc/TESTING.md.
#
# kt_kernel                 sets KT_KVER (uname -r of the guest), KT_VMLINUZ, KT_KROOT (the
#                           extracted package); returns 1 with KT_WHY set when no kernel can
#                           be had.
# kt_initramfs              sets KT_INITRD (built once per kernel, module list and init).
# kt_boot RESULTS SCRIPT TIMEOUT [MODE]: boot, run SCRIPT in the guest, power off; the
#                           console goes to RESULTS/console.log; returns timeout's status.

KT_CACHE=${NFSKEYS_KERNEL_CACHE:-$top_builddir/_kernel-cache}

# Modules the guest loads: the root file system (9p over virtio, overlay), the NFS client
# and server, CIFS, AFS, and the network helpers tests use.  Their dependencies come from
# modules.dep, their softdeps from modinfo; all of the crypto modules go in too.
KT_MODULES="virtio_pci 9p 9pnet_virtio overlay
nfs nfsv4 nfsd sunrpc auth_rpcgss lockd grace nfs_acl rpcsec_gss_krb5
cifs nls_utf8 rxrpc kafs af_alg algif_hash algif_skcipher dummy veth sch_netem sch_prio cls_u32
loop dm_flakey ext4"

kt_log() { printf '# kernel-harness: %s\n' "$*" >&2; }

# NFSKEYS_KERNEL_SUITE (opt-in; unset: the host's own lists, Debian 12's 6.1 kernel, what
# CI boots) names another suite of the host's Debian mirror to take the kernel from, e.g.
# bookworm-backports (6.12: max_bytes and strict_limit on a bdi).  It is read through a
# private apt state under the kernel cache (a sources list, lists and package cache of its
# own), so the host's apt configuration is neither read for it nor changed.  The mirror is
# the one the host's lists use for the suite's release (apt-cache policy), else the one of
# the host's own release (a later suite such as trixie-backports on Debian 12), or
# NFSKEYS_KERNEL_MIRROR.
KT_SUITE=${NFSKEYS_KERNEL_SUITE:-}

# apt-get / apt-cache, on the suite's private state when one is chosen.
kt_apt_state() { printf '%s/apt-%s' "$KT_CACHE" "$KT_SUITE"; }
kt_apt() {
	tool=$1
	shift
	if [ -z "$KT_SUITE" ]; then
		"$tool" "$@"
		return
	fi
	st=$(kt_apt_state)
	"$tool" -o Dir::Etc::SourceList="$st/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$st/lists" -o Dir::Cache="$st/cache" \
		-o Dir::State::status=/dev/null "$@"
}

# The suite's private lists: written and updated (at most once a day) under the cache
# lock; an update that fails keeps the lists there are (offline: the cached kernel).
kt_apt_update() {
	[ -n "$KT_SUITE" ] || return 0
	st=$(kt_apt_state)
	mkdir -p "$st/lists/partial" "$st/cache/archives/partial" || return 1
	mirror=${NFSKEYS_KERNEL_MIRROR:-}
	if [ -z "$mirror" ]; then
		# the mirror of the suite's release in the host's lists, else (a later release
		# than the host's, e.g. trixie-backports on Debian 12) that of the host's own
		# release: a plain "RELEASE/main" line, not -security or -updates
		rel=${KT_SUITE%%-*}
		mirror=$(apt-cache policy 2>/dev/null | awk -v s="$rel/main" '
			$4 != "amd64" { next }
			$3 == s { print $2; found = 1; exit }
			!own && $3 ~ /^[a-z]+\/main$/ { own = $2 }
			END { if (!found && own) print own }')
	fi
	if [ -z "$mirror" ]; then
		kt_log "no mirror for $KT_SUITE: the host's lists have no '${KT_SUITE%%-*}/main'" \
			"and no release of their own (set NFSKEYS_KERNEL_MIRROR)"
		return 0
	fi
	kr=
	[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] &&
		kr=" [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
	line="deb$kr $mirror $KT_SUITE main"
	if [ "$(cat "$st/sources.list" 2>/dev/null)" != "$line" ]; then
		echo "$line" >"$st/sources.list" || return 1
		rm -f "$st/updated"
	fi
	[ -n "$(find "$st/updated" -mmin -1440 2>/dev/null)" ] && return 0
	kt_log "apt-get update of $KT_SUITE (private lists in $st)"
	if kt_apt apt-get -q update >"$st/update.log" 2>&1; then
		touch "$st/updated"
	else
		kt_log "apt-get update of $KT_SUITE failed (see $st/update.log); cached lists kept"
	fi
}

# The package names the harness boots: Debian 12's linux-image-6.1.0-N-amd64, or in a
# chosen suite the generic amd64 flavour (linux-image-VERSION-amd64-unsigned, else the
# signed linux-image-VERSION-amd64; never cloud or rt).
kt_package_re() {
	if [ -z "$KT_SUITE" ]; then
		echo '^linux-image-6\.1\.0-[0-9]+-amd64$'
	else
		echo "^linux-image-[0-9][0-9.]*[^-]*-amd64${1:-}\$"
	fi
}

# The newest package of that name the (suite's) lists know (never a pinned version).
kt_newest_package() {
	for sfx in -unsigned ""; do
		p=$(kt_apt apt-cache search --names-only "$(kt_package_re $sfx)" 2>/dev/null |
			awk '{print $1}' | sort -V | tail -n 1)
		[ -n "$p" ] && { echo "$p"; return; }
		[ -n "$KT_SUITE" ] || return
	done
}

kt_kernel() {
	KT_WHY=
	mkdir -p "$KT_CACHE" || { KT_WHY="cannot create $KT_CACHE"; return 1; }
	(flock 9 && kt_apt_update) 9>"$KT_CACHE/.lock"
	pkg=${NFSKEYS_KERNEL_PACKAGE:-$(kt_newest_package)}
	ver=
	[ -n "$pkg" ] && ver=$(kt_apt apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	[ "$ver" = "(none)" ] && ver=
	if [ -n "$pkg" ] && [ -n "$ver" ]; then
		dir="$KT_CACHE/${pkg}_$ver"
	else
		# no package lists (offline): the newest kernel of this suite already in the cache
		# (the directories are named after the package, so 6.1 and a suite's coexist)
		dir=$(ls -d "$KT_CACHE"/linux-image-*_* 2>/dev/null | grep -v '\.tmp$' |
			while read -r d; do
				n=$(basename "$d")
				printf '%s\n' "${n%%_*}" | grep -Eq "$(kt_package_re -unsigned)|$(kt_package_re)" &&
					echo "$d"
			done | sort -V | tail -n 1)
		[ -n "$dir" ] && [ -f "$dir/.ready" ] || {
			KT_WHY="no kernel package ($(kt_package_re)) in the lists of ${KT_SUITE:-the host} and none cached"
			return 1
		}
		kt_log "no package lists: using the cached $(basename "$dir")"
	fi
	(
		flock 9
		[ -f "$dir/.ready" ] && exit 0
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" || exit 1
		# Since Linux 6.19 in Debian, linux-image-V-amd64 is an empty package depending
		# on linux-base-V (config, modules.builtin), linux-binary-V (vmlinuz) and
		# linux-modules-V of the same version: those are fetched with it.
		parts=$(kt_apt apt-cache show "$pkg=$ver" 2>/dev/null | sed -n 's/^Depends: //p' |
			head -n 1 | tr ',' '\n' | sed -n "s/^ *\(linux-[a-z-]*-[^ ]*\) (= $ver)\$/\1=$ver/p")
		kt_log "fetching $pkg $ver${KT_SUITE:+ ($KT_SUITE)}${parts:+ and its parts} into $dir"
		(cd "$dir.tmp" && kt_apt apt-get download "$pkg=$ver" $parts) \
			>"$dir.tmp/download.log" 2>&1 || { cat "$dir.tmp/download.log" >&2; exit 1; }
		for deb in "$dir.tmp"/*.deb; do
			dpkg-deb -x "$deb" "$dir.tmp/root" || exit 1
		done
		rm -f "$dir.tmp"/*.deb
		# a merged-/usr package (modules and vmlinuz under usr/lib/modules/V): moved where
		# the host's depmod and the initramfs builder look, lib/modules and boot/
		r=$dir.tmp/root
		if [ ! -d "$r/lib/modules" ] && [ -d "$r/usr/lib/modules" ]; then
			mv "$r/usr/lib/modules" "$r/lib/modules" 2>/dev/null ||
				{ mkdir -p "$r/lib" && mv "$r/usr/lib/modules" "$r/lib/modules"; } || exit 1
		fi
		for k in "$r"/lib/modules/*/vmlinuz; do
			[ -f "$k" ] || continue
			mkdir -p "$r/boot" && mv "$k" "$r/boot/vmlinuz-$(basename "$(dirname "$k")")" || exit 1
		done
		kv=$(ls "$dir.tmp/root/lib/modules" | head -n 1)
		depmod -b "$dir.tmp/root" "$kv" || exit 1
		echo "$kv" >"$dir.tmp/kver"
		rm -rf "$dir" && mv "$dir.tmp" "$dir" && touch "$dir/.ready"
	) 9>"$KT_CACHE/.lock" || { KT_WHY="cannot download or unpack $pkg $ver"; return 1; }
	KT_KROOT="$dir/root"
	KT_KVER=$(cat "$dir/kver")
	KT_VMLINUZ="$KT_KROOT/boot/vmlinuz-$KT_KVER"
	KT_KDIR=$dir
	[ -f "$KT_VMLINUZ" ] || { KT_WHY="$KT_VMLINUZ missing"; return 1; }
}

# Copy module FILE (a path under KT_KROOT) into the initramfs tree $1, uncompressed so
# busybox's modprobe (and any modprobe) can read it.
kt_copy_module() {
	rel=${2#"$KT_KROOT"/}
	case $rel in
	*.ko.xz) mkdir -p "$1/$(dirname "$rel")" && xz -dc "$2" >"$1/${rel%.xz}" ;;
	*.ko.zst) mkdir -p "$1/$(dirname "$rel")" && zstd -qdc "$2" >"$1/${rel%.zst}" ;;
	*.ko.gz) mkdir -p "$1/$(dirname "$rel")" && gzip -dc "$2" >"$1/${rel%.gz}" ;;
	*) mkdir -p "$1/$(dirname "$rel")" && cp "$2" "$1/$rel" ;;
	esac
}

kt_initramfs() {
	init="$top_srcdir/tests/kernel/guest-init"
	key=$( { cat "$init" "$top_srcdir/tests/kernel/vm.sh"; busybox 2>&1 | head -n 1; } | sha256sum | cut -c1-16)
	KT_INITRD="$KT_KDIR/initramfs-$key.cpio"
	[ -f "$KT_INITRD" ] && return 0
	(
		flock 9
		[ -f "$KT_INITRD" ] && exit 0
		t="$KT_KDIR/initramfs.tmp"
		rm -rf "$t" && mkdir -p "$t/bin" "$t/dev" "$t/proc" "$t/sys" "$t/lib/modules/$KT_KVER" \
			"$t/newroot" "$t/host" "$t/ovl" || exit 1
		cp /bin/busybox "$t/bin/busybox" || exit 1
		for a in $("$t/bin/busybox" --list); do
			[ "$a" = busybox ] || ln -s busybox "$t/bin/$a"
		done
		cp "$init" "$t/init" && chmod 0755 "$t/init" || exit 1
		files=
		for m in $KT_MODULES; do
			# built in: nothing to load
			grep -q "/$m\.ko" "$KT_KROOT/lib/modules/$KT_KVER/modules.builtin" && continue
			deps=$(modprobe -d "$KT_KROOT" -S "$KT_KVER" --show-depends "$m" 2>&1) ||
				{ echo "module $m: $deps" >&2; exit 1; }
			files="$files $(printf '%s\n' "$deps" | awk '$1 == "insmod" {print $2}')"
			# softdeps name aliases (gcm, sha512, aes...); some are built in or absent
			for s in $(modinfo -b "$KT_KROOT" -k "$KT_KVER" -F softdep "$m" 2>/dev/null); do
				case $s in *:) continue ;; esac
				files="$files $(modprobe -d "$KT_KROOT" -S "$KT_KVER" --show-depends "$s" \
					2>/dev/null | awk '$1 == "insmod" {print $2}')"
			done
		done
		# every crypto module: CIFS asks the crypto API for ccm(aes), gcm(aes), cmac(aes)...
		# by name at mount time (SMB3 signing and encryption), which softdeps do not list
		m="$KT_KROOT/lib/modules/$KT_KVER/kernel"
		files="$files $(find "$m/crypto" "$m/arch/x86/crypto" "$m/lib/crypto" -name '*.ko*' 2>/dev/null)"
		for f in $(printf '%s\n' $files | sort -u); do
			kt_copy_module "$t" "$f" || exit 1
		done
		cp "$KT_KROOT/lib/modules/$KT_KVER"/modules.builtin* \
			"$KT_KROOT/lib/modules/$KT_KVER/modules.order" "$t/lib/modules/$KT_KVER/"
		depmod -b "$t" "$KT_KVER" || exit 1
		(cd "$t" && find . | busybox cpio -o -H newc 2>/dev/null) >"$KT_INITRD.tmp" || exit 1
		mv "$KT_INITRD.tmp" "$KT_INITRD" && rm -rf "$t"
	) 9>"$KT_KDIR/.initramfs.lock" || return 1
	kt_log "built $(basename "$KT_INITRD") ($(($(stat -c %s "$KT_INITRD") / 1048576)) MiB)"
}

# kt_boot RESULTS SCRIPT TIMEOUT MODE INSTALL: MODE is test (run SCRIPT, power off) or shell
# (an interactive shell on the console, after SCRIPT when one is given).  INSTALL is the
# DESTDIR of a make install that the guest copies into its root.  NFSKEYS_KERNEL_SMP sets
# the guest's vCPUs (default 1: under TCG a second vCPU costs more host CPU than it saves),
# NFSKEYS_KERNEL_MEM its memory (default 2G; the fleet bench asks for more).
kt_boot() {
	res=$1 script=$2 secs=$3 mode=$4 inst=$5
	# no_timer_check: under TCG on a loaded host the kernel's IO-APIC timer check can
	# fail and panic at boot ("IO-APIC + timer doesn't work"; seen once with one vCPU)
	append="console=ttyS0 panic=-1 oops=panic loglevel=4 rdinit=/init no_timer_check"
	append="$append nfskeys.mode=$mode nfskeys.test=$script nfskeys.install=$inst"
	append="$append nfskeys.srcdir=$top_srcdir nfskeys.builddir=$top_builddir"
	append="$append nfskeys.uid=$(id -u) ${NFSKEYS_KERNEL_APPEND:-}"
	set -- -machine pc,accel=tcg -cpu max -smp "${NFSKEYS_KERNEL_SMP:-1}" -m "${NFSKEYS_KERNEL_MEM:-2G}" -nographic -no-reboot -nic none \
		-kernel "$KT_VMLINUZ" -initrd "$KT_INITRD" -append "$append" \
		-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev local,id=results,path="$res",security_model=none,multidevs=remap \
		-device virtio-9p-pci,fsdev=results,mount_tag=results
	if [ "$mode" = shell ]; then
		# the console is the terminal (Ctrl-A X quits QEMU)
		timeout --foreground -k 5 "$secs" qemu-system-x86_64 "$@" 2>&1 |
			tee "$res/console.log"
		return 0
	fi
	# in the background, so that a harness stopped by a signal takes QEMU with it
	# (timeout runs it in a process group of its own)
	timeout -k 5 "$secs" qemu-system-x86_64 "$@" </dev/null >"$res/console.log" 2>&1 &
	KT_QEMU_PID=$!
	trap 'kill -TERM $KT_QEMU_PID 2>/dev/null; exit 130' INT TERM HUP
	wait $KT_QEMU_PID
	_rc=$?
	trap - INT TERM HUP
	return $_rc
}
