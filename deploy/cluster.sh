#!/usr/bin/env bash
# A whole sitesift deployment on 127.0.0.1, as the current user (no root): a primary (takes
# writes, exports a snapshot), nginx (serves the export directory over HTTP and load-balances
# search traffic across the nodes, every other route to the primary), and 2 read-only search
# nodes that poll the snapshot through nginx and push their query logs to the primary.
#
#   deploy/cluster.sh up            start everything (make cluster); prints the URLs
#   deploy/cluster.sh down          stop everything (make cluster-stop)
#   deploy/cluster.sh start-node N  (re)start search node N (after a crash); N past CLUSTER_NODES
#                                   starts an extra node outside the balancer (a standby, or a
#                                   reference to compare with: bench/export.ts)
#   deploy/cluster.sh stop-node N   stop search node N
#   deploy/cluster.sh status        what runs, with pids and URLs
#
# Everything lives in CLUSTER_DIR (default ./.cluster): data directories, the export, nginx's
# config, pid, logs and temp files, cluster.env (URLs, master key file). Ports are free ones
# picked at `up` unless given: CLUSTER_PRIMARY_PORT, CLUSTER_LB_PORT (search + writes through
# nginx), CLUSTER_EXPORT_PORT (the snapshot over HTTP), CLUSTER_NODE1_PORT, CLUSTER_NODE2_PORT.
# CLUSTER_POLL_MS: the nodes' snapshot poll interval (default 2000). CLUSTER_EXPORT_SCHEDULE:
# the primary's export cron (default every minute; "" for none). CLUSTER_NODES: node count (2).
# CLUSTER_SEARCH_THREADS: search threads per node (default: this machine's cores ÷ nodes, at
# least 1: nodes sharing a machine share its cores; on a machine of its own a node takes them
# all, SITESIFT_SEARCH_THREADS' default). CLUSTER_RATE_PER_SECOND / CLUSTER_RATE_BURST: nginx's
# per-visitor limit on the public routes (default 20 / 60, as the server's own; 0: none); the
# nodes' own limit is off, since behind nginx every visitor has nginx's address.
# CLUSTER_NODE_ENV: extra "NAME=value …" settings for the nodes (e.g. SITESIFT_SEARCH_CACHE_MB=0).
# CLUSTER_SITESIFT: the command that runs sitesift (default bin/sitesift over dist/ when built,
# else node with tsx over src/cli.ts). NGINX: the nginx binary (default /usr/sbin/nginx).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIR=$(mkdir -p "${CLUSTER_DIR:-$ROOT/.cluster}" && cd "${CLUSTER_DIR:-$ROOT/.cluster}" && pwd)
NGINX=${NGINX:-/usr/sbin/nginx}
NODES=${CLUSTER_NODES:-2}
if [ -n "${CLUSTER_SITESIFT:-}" ]; then
  SITESIFT=$CLUSTER_SITESIFT
elif [ -f "$ROOT/dist/src/cli.js" ]; then
  SITESIFT="$ROOT/bin/sitesift"
else
  SITESIFT="$ROOT/bin/sitesift --node --import tsx $ROOT/src/cli.ts"
fi

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

wait_http() { # url seconds
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    if curl -s -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  echo "deploy/cluster.sh: $1 did not answer within $2 s" >&2
  return 1
}

load_env() {
  [ -f "$DIR/cluster.env" ] || { echo "deploy/cluster.sh: no cluster in $DIR (run: make cluster)" >&2; exit 1; }
  # shellcheck disable=SC1091
  . "$DIR/cluster.env"
}

start_node() { # n
  local n=$1 port_var="NODE${1}_PORT"
  local port=${!port_var:-}
  if [ -z "$port" ]; then
    # A node beyond the balancer's: its port is picked now and kept in cluster.env.
    port=$(free_port)
    eval "NODE${n}_PORT=$port"
    { echo "NODE${n}_PORT=$port"; echo "NODE${n}_URL=http://127.0.0.1:$port"; } >>"$DIR/cluster.env"
  fi
  local threads=${CLUSTER_SEARCH_THREADS:-$SEARCH_THREADS}
  mkdir -p "$DIR/node$n"
  # A node killed with SIGKILL leaves its lock file; the pid in it is dead, which serve accepts.
  # The node builds no segments, so one pool thread is enough. Its public rate limit is off:
  # nginx limits per visitor (every request reaches the node from nginx's address).
  (
    cd "$ROOT"
    # shellcheck disable=SC2086
    env HOST=127.0.0.1 PORT="$port" SITESIFT_DATA_DIR="$DIR/node$n" SITESIFT_ROLE=search \
      SITESIFT_SNAPSHOT="$EXPORT_URL/" SITESIFT_SNAPSHOT_POLL_MS="$POLL_MS" \
      SITESIFT_PRIMARY_URL="$PRIMARY_URL" SITESIFT_NODE_KEY="$(cat "$DIR/node.key")" \
      SITESIFT_MASTER_KEY="$(cat "$DIR/master.key")" SITESIFT_QUERYLOG_PUSH_MS=1000 \
      SITESIFT_SEARCH_THREADS="$threads" SITESIFT_WORKERS=1 SITESIFT_RATE_PUBLIC_PER_SECOND=0 \
      ${CLUSTER_NODE_ENV:-} nohup $SITESIFT serve >"$DIR/node$n.log" 2>&1 &
    echo $! >"$DIR/node$n.pid"
  )
  wait_http "http://127.0.0.1:$port/health" 60
}

write_nginx_conf() {
  local servers="" i port_var
  for ((i = 1; i <= NODES; i++)); do
    port_var="NODE${i}_PORT"
    # Passive health checks: after 1 failed attempt a node is skipped for 5 s, then tried again.
    servers+="        server 127.0.0.1:${!port_var} max_fails=1 fail_timeout=5s;"$'\n'
  done
  # The per-visitor limit of the public routes (the nodes see only nginx's address).
  local rate_zone="" rate_use=""
  if [ "$RATE_PER_SECOND" -gt 0 ]; then
    rate_zone="limit_req_zone \$binary_remote_addr\$arg_site zone=public:10m rate=${RATE_PER_SECOND}r/s;"
    rate_use="limit_req zone=public burst=$RATE_BURST nodelay;"
  fi
  mkdir -p "$DIR/nginx/logs" "$DIR/nginx/temp"
  # Started by root, nginx would run its workers as "nobody", who cannot read a private
  # CLUSTER_DIR: they run as the current user instead (a non-root master ignores "user").
  local user_line=""
  [ "$(id -u)" -eq 0 ] && user_line="user $(id -un) $(id -gn);"
  cat >"$DIR/nginx/nginx.conf" <<EOF
# Generated by deploy/cluster.sh. Runs as the current user; every path is under $DIR.
$user_line
worker_processes 1;
pid $DIR/nginx/nginx.pid;
error_log $DIR/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $DIR/nginx/temp/body;
    proxy_temp_path $DIR/nginx/temp/proxy;
    fastcgi_temp_path $DIR/nginx/temp/fastcgi;
    uwsgi_temp_path $DIR/nginx/temp/uwsgi;
    scgi_temp_path $DIR/nginx/temp/scgi;
    client_max_body_size 64m;
    $rate_zone
    limit_req_status 429;

    # The snapshot: plain files, served to the nodes (any static host or object store would do).
    server {
        listen 127.0.0.1:$EXPORT_PORT;
        root $DIR/export;
        location / { try_files \$uri =404; }
        # index.json changes at every export: never cached; blobs are immutable by name.
        location = /index.json { add_header Cache-Control "no-cache"; }
    }

    # least_conn: searches differ in cost, so the node with fewer requests in flight gets the next.
    upstream search_nodes {
        least_conn;
$servers        keepalive 32;
    }
    upstream primary {
        server 127.0.0.1:$PRIMARY_PORT;
        keepalive 8;
    }

    server {
        listen 127.0.0.1:$LB_PORT;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host \$host;
        proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
        # Open-source nginx has no active health checks: a node that refuses, times out or
        # answers 502/503/504 (503 not_ready before its first snapshot) is retried on the other
        # node at once and marked down for fail_timeout.
        proxy_connect_timeout 1s;
        proxy_next_upstream error timeout http_502 http_503 http_504 non_idempotent;
        proxy_next_upstream_tries 2;

        location = /sites { $rate_use proxy_pass http://search_nodes; }
        location = /sites/suggest { $rate_use proxy_pass http://search_nodes; }
        location = /sites/similar { $rate_use proxy_pass http://search_nodes; }
        location = /sites/queries/log { $rate_use proxy_pass http://search_nodes; }
        # Over the limit: the API's 429 (docs/API.md), with CORS so a page can read it.
        error_page 429 = @rate_limited;
        location @rate_limited {
            default_type application/json;
            add_header Retry-After 1 always;
            add_header Access-Control-Allow-Origin * always;
            return 429 '{"status":"failure","code":"rate_limited","message":"Too many requests from this address to this project; retry after 1 s."}';
        }
        # Everything else (indexing, reports, admin, the panel) is the primary's.
        location / { proxy_pass http://primary; }
    }
}
EOF
}

up() {
  if [ -f "$DIR/cluster.env" ] && [ -f "$DIR/primary.pid" ] && kill -0 "$(cat "$DIR/primary.pid")" 2>/dev/null; then
    echo "deploy/cluster.sh: a cluster already runs in $DIR (make cluster-stop first)" >&2
    exit 1
  fi
  command -v "$NGINX" >/dev/null || { echo "deploy/cluster.sh: nginx not found at $NGINX (apt-get install nginx)" >&2; exit 1; }
  mkdir -p "$DIR/primary" "$DIR/export"
  PRIMARY_PORT=${CLUSTER_PRIMARY_PORT:-$(free_port)}
  LB_PORT=${CLUSTER_LB_PORT:-$(free_port)}
  EXPORT_PORT=${CLUSTER_EXPORT_PORT:-$(free_port)}
  POLL_MS=${CLUSTER_POLL_MS:-2000}
  local cores
  cores=$(node -e 'console.log(require("os").availableParallelism())')
  SEARCH_THREADS=${CLUSTER_SEARCH_THREADS:-$(( cores / NODES > 0 ? cores / NODES : 1 ))}
  RATE_PER_SECOND=${CLUSTER_RATE_PER_SECOND:-20}
  RATE_BURST=${CLUSTER_RATE_BURST:-60}
  PRIMARY_URL="http://127.0.0.1:$PRIMARY_PORT"
  EXPORT_URL="http://127.0.0.1:$EXPORT_PORT"
  {
    echo "DIR=$DIR"
    echo "PRIMARY_PORT=$PRIMARY_PORT"
    echo "LB_PORT=$LB_PORT"
    echo "EXPORT_PORT=$EXPORT_PORT"
    echo "POLL_MS=$POLL_MS"
    echo "SEARCH_THREADS=$SEARCH_THREADS"
    echo "RATE_PER_SECOND=$RATE_PER_SECOND"
    echo "RATE_BURST=$RATE_BURST"
    echo "NODES=$NODES"
    echo "PRIMARY_URL=$PRIMARY_URL"
    echo "EXPORT_URL=$EXPORT_URL"
    echo "LB_URL=http://127.0.0.1:$LB_PORT"
  } >"$DIR/cluster.env"
  local i port_var p
  for ((i = 1; i <= NODES; i++)); do
    port_var="CLUSTER_NODE${i}_PORT"
    p=${!port_var:-$(free_port)}
    eval "NODE${i}_PORT=$p"
    echo "NODE${i}_PORT=$p" >>"$DIR/cluster.env"
    echo "NODE${i}_URL=http://127.0.0.1:$p" >>"$DIR/cluster.env"
  done
  [ -f "$DIR/master.key" ] || (umask 077 && node -e 'console.log(require("crypto").randomBytes(24).toString("base64url"))' >"$DIR/master.key")

  local schedule=${CLUSTER_EXPORT_SCHEDULE-* * * * *}
  local export_env=()
  [ -n "$schedule" ] && export_env=(SITESIFT_EXPORT_SCHEDULE="$schedule" SITESIFT_EXPORT_OUT="$DIR/export")
  (
    cd "$ROOT"
    env HOST=127.0.0.1 PORT=$PRIMARY_PORT SITESIFT_DATA_DIR="$DIR/primary" SITESIFT_MASTER_KEY="$(cat "$DIR/master.key")" \
      "${export_env[@]}" nohup $SITESIFT serve >"$DIR/primary.log" 2>&1 &
    echo $! >"$DIR/primary.pid"
  )
  wait_http "$PRIMARY_URL/health" 60
  if [ ! -s "$DIR/node.key" ]; then
    curl -sf -X POST -H "Authorization: Bearer $(cat "$DIR/master.key")" -H 'content-type: application/json' \
      -d '{"name":"cluster"}' "$PRIMARY_URL/admin/nodes" | node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>console.log(JSON.parse(s).key))' >"$DIR/node.key"
    chmod 600 "$DIR/node.key"
  fi

  write_nginx_conf
  "$NGINX" -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" -e "$DIR/nginx/logs/error.log"
  wait_http "$EXPORT_URL/" 10 || true

  for ((i = 1; i <= NODES; i++)); do start_node "$i"; done
  status
}

stop_pid() { # file
  local f=$1 pid i
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

down() {
  [ -d "$DIR" ] || return 0
  local f
  for f in "$DIR"/node*.pid; do [ -e "$f" ] && stop_pid "$f"; done
  if [ -f "$DIR/nginx/nginx.pid" ]; then
    "$NGINX" -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" -e "$DIR/nginx/logs/error.log" -s quit 2>/dev/null || stop_pid "$DIR/nginx/nginx.pid"
    for ((i = 0; i < 50; i++)); do [ -f "$DIR/nginx/nginx.pid" ] || break; sleep 0.1; done
  fi
  stop_pid "$DIR/primary.pid"
  echo "cluster in $DIR stopped (data kept; rm -rf $DIR to start over)"
}

status() {
  load_env
  local f name
  echo "cluster in $DIR"
  echo "  search and writes (nginx): $LB_URL"
  echo "  primary:                   $PRIMARY_URL   master key: $DIR/master.key"
  echo "  snapshot over HTTP:        $EXPORT_URL/   (files in $DIR/export)"
  for f in "$DIR"/primary.pid "$DIR"/node*.pid "$DIR"/nginx/nginx.pid; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .pid)
    if kill -0 "$(cat "$f")" 2>/dev/null; then echo "  $name: running (pid $(cat "$f"))"; else echo "  $name: not running"; fi
  done
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  start-node)
    load_env
    [ -n "${2:-}" ] || { echo "usage: deploy/cluster.sh start-node N" >&2; exit 2; }
    start_node "$2"
    ;;
  stop-node)
    load_env
    [ -n "${2:-}" ] || { echo "usage: deploy/cluster.sh stop-node N" >&2; exit 2; }
    stop_pid "$DIR/node$2.pid"
    ;;
  status) status ;;
  *) echo "usage: deploy/cluster.sh up|down|start-node N|stop-node N|status" >&2; exit 2 ;;
esac
