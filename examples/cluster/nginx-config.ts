/**
 * The nginx configuration that balances MCP Streamable HTTP across rxmcp instances sharing one
 * Redis. Shared by the cluster example (`run.ts`) and the test harness (spec/helpers/nginx.ts).
 */

/** Options of {@link nginxConfig}; defaults in {@link NGINX_CONFIG_DEFAULTS}. */
export interface NginxConfigOptions {
  /** The instances, as `host:port`. */
  upstreams: readonly string[]
  /** The port nginx listens on. */
  port: number
  /** The interface nginx listens on (default 127.0.0.1). */
  host?: string
  /** The directory for the pid file, the logs and the temp files (nginx's `-p` prefix). */
  dir: string
  /** Idle upstream connections each worker keeps open (default 64). */
  keepalive?: number
  /** How long a response (an SSE stream above all) may send nothing before nginx drops it (default 1 h). */
  readTimeout?: string
  /** Run the workers as this user; needed when nginx starts as root (default: root when this process is root, else none). */
  user?: string
  /** A number `GET /__rxmcp/generation` answers (default 0): a reload is done once the new number answers. */
  generation?: number
}

/** DEFAULTS of {@link NginxConfigOptions}. */
export const NGINX_CONFIG_DEFAULTS = { host: '127.0.0.1', keepalive: 64, readTimeout: '3600s' } as const

/** The access log's name inside `dir`: one JSON object per line (see {@link nginxConfig}). */
export const ACCESS_LOG = 'access.log'

/**
 * Writes nginx.conf for a round-robin balancer in front of MCP instances, with no session
 * stickiness (any instance serves any session through Redis). What matters for MCP:
 *
 * - responses are not buffered (`proxy_buffering off`), so each SSE event reaches the client as it
 *   is written; nor are request bodies (`proxy_request_buffering off`), nor anything cached;
 * - HTTP/1.1 to the instances with `Connection` cleared, so upstream connections are kept alive
 *   (`keepalive`) instead of one TCP handshake per POST; they are dropped after 4 s idle, before
 *   node:http's own 5 s keep-alive timeout, so nginx never sends a POST on a socket the instance
 *   is closing (a POST is not retried once sent);
 * - a long `proxy_read_timeout`: an SSE stream may be quiet for long (rxmcp sends a keep-alive
 *   comment every 15 s by default);
 * - `Host` is passed as the client sent it: the instance checks it (DNS-rebinding protection), so
 *   a loopback listener accepts a loopback name and a public one needs `allowedHosts`;
 * - a connection refused or timed out moves the request to the next instance
 *   (`proxy_next_upstream error timeout`), so a dead instance costs no failed request.
 *
 * The access log has one JSON object per request: method, uri, upstream (every address tried,
 * comma-separated), status and the request's Mcp-Session-Id.
 */
export function nginxConfig(options: NginxConfigOptions): string {
  const { upstreams, port, dir } = options
  if (upstreams.length === 0) throw new TypeError('nginxConfig: at least one upstream is needed')
  const host = options.host ?? NGINX_CONFIG_DEFAULTS.host
  const keepalive = options.keepalive ?? NGINX_CONFIG_DEFAULTS.keepalive
  const readTimeout = options.readTimeout ?? NGINX_CONFIG_DEFAULTS.readTimeout
  const user = options.user ?? (process.getuid?.() === 0 ? 'root' : undefined)
  return `${user === undefined ? '' : `user ${user};\n`}worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;

events {
  worker_connections 4096;
}

http {
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;

  log_format mcp escape=json '{"method":"$request_method","uri":"$request_uri","upstream":"$upstream_addr","status":$status,"sessionId":"$http_mcp_session_id"}';
  access_log ${dir}/${ACCESS_LOG} mcp;

  upstream mcp {
${upstreams.map(address => `    server ${address};`).join('\n')}
    keepalive ${keepalive};
    keepalive_timeout 4s;
  }

  server {
    listen ${host}:${port};
    # The instances enforce their own body limit (and answer it in JSON-RPC).
    client_max_body_size 0;

    # Which configuration the workers run (spawn-nginx.ts waits for it after a reload).
    location = /__rxmcp/generation {
      access_log off;
      return 200 "${options.generation ?? 0}";
    }

    location / {
      proxy_pass http://mcp;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_cache off;
      proxy_read_timeout ${readTimeout};
      proxy_send_timeout ${readTimeout};
      proxy_connect_timeout 2s;
      proxy_next_upstream error timeout;
      proxy_next_upstream_tries ${upstreams.length};
    }
  }
}
`
}
