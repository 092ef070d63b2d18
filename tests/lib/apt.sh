# Sourced: apt configurations of their own for Debian suites and
# architectures other than the machine's, so that its sources, state and
# architecture list stay untouched (kernel-facts: 2.5 s per update).

# private_apt DIR SUITE ARCH [COMPONENTS]: an apt configuration for
# Debian's SUITE on ARCH with COMPONENTS ("main" unless given; lists, state
# and cache under DIR/apt-SUITE-ARCH[-COMPONENTS]). Prints the file for
# APT_CONFIG.
private_apt() {
	comps=${4:-main}
	d=$(mkdir -p "$1" && cd "$1" && pwd)/apt-$2-$3
	[ "$comps" = main ] || d=$d-$(echo "$comps" | tr ' ' '-')
	mkdir -p "$d/state/lists/partial" "$d/cache/archives/partial"
	touch "$d/state/status"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $2 $comps" > "$d/sources.list"
	cat > "$d/apt.conf" <<-CONF
	Dir::State "$d/state";
	Dir::State::status "$d/state/status";
	Dir::Cache "$d/cache";
	Dir::Etc::SourceList "$d/sources.list";
	Dir::Etc::SourceParts "/nonexistent";
	APT::Architecture "$3";
	APT::Architectures { "$3"; };
	CONF
	[ -n "$(ls "$d/state/lists" | grep -v partial)" ] || APT_CONFIG=$d/apt.conf apt-get update -qq >/dev/null 2>&1
	echo "$d/apt.conf"
}

# fetch_debs APT_CONFIG DIR PACKAGE[=VERSION]...: the packages' .debs in DIR
# (apt-get download, as the files are kept there, nothing downloaded twice).
fetch_debs() {
	conf=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	for p in "$@"; do
		ls "$dir/${p%%=*}_"*.deb > /dev/null 2>&1 && continue
		(cd "$dir" && APT_CONFIG=$conf apt-get download -q "$p" > /dev/null 2>&1) || {
			echo "apt-get download $p failed" >&2
			return 1
		}
	done
}
