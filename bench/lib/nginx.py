"""The nginx baselines' configuration: one worker, no access log, keep-alive without limits,
temp paths under the run's directory; the caller supplies the http {} body (servers,
upstreams)."""

HEAD = """worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 65;
  client_body_temp_path {dir}/body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
{body}
}}
"""


def conf(directory, body):
    """nginx.conf text for a run in `directory` with `body` inside http {}."""
    return HEAD.format(dir=directory, body=body)
