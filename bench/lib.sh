# bench/lib.sh: shared by every bench/*.sh part. Source it; it sets
#   HR        our hookreplay binary (built from the work tree)
#   HR_BEFORE hookreplay built from $BEFORE (a commit; default: none) for before/after rows
#   HEY WRK NGINX_BIN  the baselines, installed into $BENCH_CACHE (not the repo)
#   ROWS      the file table rows are appended to (run.sh prints them as one table)
# and gives row, median, free_port, wait_port, start/stop helpers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH_CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hookreplay-bench}
mkdir -p "$BENCH_CACHE/bin"
QUICK=${QUICK:-0}
if [ -z "${BENCH_WORK:-}" ]; then
	BENCH_WORK=$(mktemp -d /tmp/hookreplay-bench.XXXXXX)
	BENCH_OWN_WORK=1
fi
ROWS=${ROWS:-$BENCH_WORK/rows.md}
BENCH_PIDS=()
bench_cleanup() {
	for p in "${BENCH_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "${BENCH_OWN_WORK:-}" ]; then
		[ -s "$ROWS" ] && { table_head; cat "$ROWS"; }
		rm -rf "$BENCH_WORK"
	fi
}
trap bench_cleanup EXIT

log() { echo "bench: $*" >&2; }

# install_tools: nginx and wrk from Debian packages, hey from the Go module proxy.
install_tools() {
	if ! command -v nginx >/dev/null || ! command -v wrk >/dev/null; then
		log "installing nginx and wrk (apt-get)"
		if [ "$(id -u)" = 0 ]; then
			apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light wrk >/dev/null
		else
			sudo apt-get update -qq >/dev/null && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light wrk >/dev/null
		fi
	fi
	if [ ! -x "$BENCH_CACHE/bin/hey" ]; then
		log "installing hey (go install github.com/rakyll/hey@v0.1.5)"
		GOBIN="$BENCH_CACHE/bin" GOFLAGS=-mod=mod go install github.com/rakyll/hey@v0.1.5
	fi
	HEY="$BENCH_CACHE/bin/hey"
	WRK=$(command -v wrk)
	NGINX_BIN=$(command -v nginx || echo /usr/sbin/nginx)
}

# build: our binary, the bench helpers, and (with BEFORE=commit) the binary before the fixes.
build() {
	if [ -z "${HR:-}" ]; then
		log "building hookreplay and the bench helpers"
		go build -o "$BENCH_WORK/hookreplay" .
		go build -o "$BENCH_WORK/load" ./bench/load
		go build -o "$BENCH_WORK/noop" ./bench/replay/noop
		go build -o "$BENCH_WORK/fill" ./bench/fill
		HR=$BENCH_WORK/hookreplay
	fi
	LOAD=$BENCH_WORK/load NOOP=$BENCH_WORK/noop FILL=$BENCH_WORK/fill
	HR_BEFORE=${HR_BEFORE:-}
	if [ -n "${BEFORE:-}" ] && [ -z "${HR_BEFORE:-}" ]; then
		log "building hookreplay at $BEFORE (the 'before' column)"
		local src=$BENCH_WORK/before-src
		mkdir -p "$src" && git archive "$BEFORE" | tar -x -C "$src"
		(cd "$src" && go build -o "$BENCH_WORK/hookreplay-before" .)
		HR_BEFORE=$BENCH_WORK/hookreplay-before
	fi
	export HR HR_BEFORE LOAD NOOP FILL
}

setup() {
	install_tools
	build
	export HEY WRK NGINX_BIN BENCH_WORK ROWS BENCH_CACHE QUICK
}

table_head() {
	echo "| part | measure | ours | baseline | ours / baseline |"
	echo "| --- | --- | ---: | ---: | ---: |"
}

# row PART MEASURE OURS BASELINE [RATIO]: one table row; the ratio is ours/baseline unless given.
row() {
	local ratio=${5:-}
	if [ -z "$ratio" ]; then
		ratio=$(awk -v a="$3" -v b="$4" 'BEGIN { a += 0; b += 0; if (b == 0) print "-"; else if (a / b < 0.1) printf "%.3f×", a / b; else printf "%.2f×", a / b }')
	fi
	printf '| %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" "$ratio" | tee -a "$ROWS" >&2
}

# median of numbers on stdin.
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
	for _ in $(seq 1 300); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.02
	done
	log "nothing listens on port $1"
	return 1
}
# bg CMD...: start in the background, remembered for cleanup; the pid is in $BG.
bg() { "$@" & BG=$!; BENCH_PIDS+=("$BG"); }
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
# rss_kb CMD...: run CMD (stdout to /dev/null) and print its peak RSS in KiB.
rss_kb() { /usr/bin/time -f '%M' -o "$BENCH_WORK/rss" "$@" >/dev/null; cat "$BENCH_WORK/rss"; }
# secs CMD...: wall seconds of CMD; its stderr is shown only when it fails.
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>"$BENCH_WORK/secs.err" || cat "$BENCH_WORK/secs.err" >&2
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }'
}

# post_lua FILE: a wrk script that POSTs FILE as JSON.
post_lua() {
	cat <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$PWD/$1", "rb")
wrk.body = f:read("*a")
f:close()
LUA
}

# start_nginx DIR HANDLER: nginx proxy_pass with a keep-alive upstream to
# HANDLER (host:port), the usual reverse proxy; sets ngx_port and NGX_PID.
start_nginx() {
	local dir=$1
	ngx_port=$(free_port)
	mkdir -p "$dir/logs"
	cat >"$dir/nginx.conf" <<NGX
worker_processes auto;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log error;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	upstream handler { server $2; keepalive 64; }
	server {
		listen 127.0.0.1:$ngx_port;
		location / {
			proxy_pass http://handler;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
}
NGX
	bg "$NGINX_BIN" -p "$dir" -c "$dir/nginx.conf"
	NGX_PID=$BG
	wait_port "$ngx_port"
}

# wrk_run LUA URL C: wrk for $DUR seconds at concurrency C; prints "p50_ms rps".
wrk_run() {
	"$WRK" -t "$([ "$3" -gt 1 ] && echo 2 || echo 1)" -c "$3" -d "${DUR}s" --latency -s "$1" "$2" |
		awk '
		function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
		$1 == "50%" { p50 = ms($2) }
		$1 == "Requests/sec:" { rps = $2 }
		END { print p50, rps }'
}

# start_handler ADDRFILE: the no-op Go handler (bench/load serve); sets handler (host:port).
start_handler() {
	bg "$LOAD" serve -addr-file "$1"
	for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.02; done
	handler=$(cat "$1")
}
