# Real containers for the tests, as a Kubernetes node runs them, on this
# host (sourced; needs root):
#   - images built offline with podman, FROM bases made with debootstrap
#     (no registry is reachable), podman running runc with the cgroupfs
#     manager (crun refuses this hybrid host) through a containers.conf and
#     a storage of the tests' own, so the machine's podman setup is left
#     alone;
#   - pods' containers started by runc itself, as containerd does under a
#     kubelet, in whatever cgroup path the layout gives (podman refuses
#     systemd slice names under the cgroupfs manager; runc takes any path).
# Bases and images are cached under BUILD/containers and reused.

# containers_init BUILD: the settings, under BUILD/containers (CDIR), and
# the image name (IMAGE).
containers_init() {
	# The image `make image` builds, by the version in the source.
	IMAGE=localhost/nvmirage:$(sed -n 's/^#define NVM_VERSION "\(.*\)"/\1/p' agent/lib/version.h)
	CDIR=$(cd "$1" && pwd)/containers
	mkdir -p "$CDIR/bundles"
	cat > "$CDIR/containers.conf" <<-EOF
	[containers]
	default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
	[engine]
	runtime = "runc"
	cgroup_manager = "cgroupfs"
	events_logger = "file"
	EOF
	cat > "$CDIR/storage.conf" <<-EOF
	[storage]
	driver = "overlay"
	graphroot = "$CDIR/storage"
	runroot = "/run/nvm-test-podman"
	EOF
	export CONTAINERS_CONF="$CDIR/containers.conf" CONTAINERS_STORAGE_CONF="$CDIR/storage.conf"
}

# debian_rootfs SUITE [PACKAGE,...]: a minbase root file system of Debian
# SUITE with the packages, made once with debootstrap (Debian's mirror)
# and cached. Prints its directory.
debian_rootfs() {
	name=$1${2:+-$(echo "$2" | tr ',' '\n' | head -n 1)}
	dir=$CDIR/rootfs-$name
	if [ ! -e "$dir/.done" ]; then
		rm -rf "$dir"
		debootstrap --variant=minbase ${2:+--include="$2"} "$1" "$dir" \
			http://deb.debian.org/debian > "$CDIR/debootstrap-$name.log" 2>&1 ||
			{ tail -n 20 "$CDIR/debootstrap-$name.log" >&2; return 1; }
		rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
		touch "$dir/.done"
	fi
	echo "$dir"
}

# image_from_rootfs DIR NAME: the root file system DIR as image NAME (podman
# import), unless NAME exists.
image_from_rootfs() {
	podman image exists "$2" 2>/dev/null && return 0
	tar -C "$1" --exclude=./.done -c . | podman import - "$2" > /dev/null
}

# nvmirage_image NAME: `make image` into NAME, FROM a debootstrapped
# bookworm tagged as the Containerfile's base.
nvmirage_image() {
	image_from_rootfs "$(debian_rootfs bookworm)" docker.io/library/debian:bookworm-slim || return 1
	make --no-print-directory image IMAGE="$1" IMAGE_BUILD_FLAGS="--network host" \
		> "$CDIR/image.log" 2>&1 || { tail -n 30 "$CDIR/image.log" >&2; return 1; }
}

# runc_start ID CGROUP ROOTFS OPTIONS -- CMD...: a container from the root
# file system ROOTFS (read-only, with tmpfs on /run and /tmp), its processes
# in cgroup path CGROUP (from the cgroup root, as a kubelet's runtime puts
# them), the host's network, detached. OPTIONS: bind=SRC:DST (read-only),
# rw=SRC:DST (a writable bind), tmpfs=DIR, hostname=NAME, privileged (every
# capability), device=PATH:MAJOR:MINOR (a character device node the
# container may use, as a device plugin gives one), env=NAME=VALUE (in its
# processes' environment). Its output goes to
# $CDIR/bundles/ID.log.
runc_start() {
	id=$1 cg=$2 rootfs=$3
	shift 3
	b=$CDIR/bundles/$id
	rm -rf "$b"
	mkdir -p "$b"
	(cd "$b" && runc spec)
	opts=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts="$opts $1"; shift; done
	shift
	python3 - "$b/config.json" "$rootfs" "$cg" "$opts" "$@" <<-'PY'
	import json, sys
	path, rootfs, cg, opts = sys.argv[1:5]
	c = json.load(open(path))
	c["root"] = {"path": rootfs, "readonly": True}
	c["process"]["terminal"] = False
	c["process"]["args"] = sys.argv[5:]
	c["process"]["env"].append("PATH=/opt/nvm:/usr/sbin:/usr/bin:/sbin:/bin")
	c["linux"]["cgroupsPath"] = cg
	c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "network"]
	c["mounts"] += [{"destination": d, "type": "tmpfs", "source": "tmpfs",
	                 "options": ["nosuid", "nodev", "mode=1777"]} for d in ("/run", "/tmp")]
	for o in opts.split():
	    k, _, v = o.partition("=")
	    if k in ("bind", "rw"):
	        src, dst = v.split(":")
	        c["mounts"].append({"destination": dst, "type": "bind", "source": src,
	                            "options": ["rbind", "ro" if k == "bind" else "rw"]})
	    elif k == "device":
	        dev, major, minor = v.split(":")
	        c["linux"].setdefault("devices", []).append(
	            {"path": dev, "type": "c", "major": int(major), "minor": int(minor),
	             "fileMode": 0o666, "uid": 0, "gid": 0})
	        c["linux"]["resources"]["devices"].append(
	            {"allow": True, "type": "c", "major": int(major), "minor": int(minor),
	             "access": "rwm"})
	    elif k == "tmpfs":
	        c["mounts"].append({"destination": v, "type": "tmpfs", "source": "tmpfs",
	                            "options": ["nosuid", "mode=755"]})
	    elif k == "hostname":
	        c["hostname"] = v
	    elif k == "env":
	        c["process"]["env"].append(v)
	    elif k == "privileged":
	        # Every capability this host's bounding set has (numbers as in
	        # linux/capability.h), as a privileged pod gets them.
	        names = ("CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID "
	                 "SETPCAP LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW "
	                 "IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT "
	                 "SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD "
	                 "LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG "
	                 "WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE").split()
	        bnd = int([l.split()[1] for l in open("/proc/self/status") if l.startswith("CapBnd")][0], 16)
	        every = ["CAP_" + n for i, n in enumerate(names) if bnd >> i & 1]
	        for k2 in ("bounding", "effective", "permitted"):
	            c["process"]["capabilities"][k2] = every
	        c["linux"]["maskedPaths"] = []
	        c["linux"]["readonlyPaths"] = []
	json.dump(c, open(path, "w"), indent=1)
	PY
	runc run -d --bundle "$b" "$id" > "$b.log" 2>&1 < /dev/null
}

# runc_pid ID: the host pid of the container's first process.
runc_pid() { runc state "$1" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])'; }

# runc_exec ID CMD...: CMD in the container (its cgroup and namespaces), as
# `kubectl exec` runs it.
runc_exec() { id=$1; shift; timeout 60 runc exec "$id" "$@"; }

# runc_remove ID...: kills and deletes the containers (and their cgroups).
runc_remove() {
	for id in "$@"; do
		runc kill "$id" KILL 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			runc delete --force "$id" 2>/dev/null && break
			sleep 0.1
		done
		rm -rf "$CDIR/bundles/$id"
	done
}

# cgroup_trees_remove PATH...: the cgroup PATHs (from a hierarchy's root)
# and everything below them, in the cgroup2 tree and in every v1
# hierarchy (runc makes a container's cgroup in each), deepest first.
cgroup_trees_remove() {
	for p in "$@"; do
		for h in /sys/fs/cgroup /sys/fs/cgroup/*; do
			[ -d "$h$p" ] || continue
			find "$h$p" -depth -type d | while read -r d; do
				[ ! -e "$d/cgroup.kill" ] || echo 1 > "$d/cgroup.kill"
				rmdir "$d" 2>/dev/null
			done
		done
	done
}
