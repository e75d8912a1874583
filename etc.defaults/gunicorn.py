"""Gunicorn settings for lsup-server.

``bind`` and ``workers`` come from the Lakesuperior configuration
(``server.bind`` / ``LSUP_SERVER_BIND``, ``server.workers`` /
``LSUP_SERVER_WORKERS``): lsup-server sets them after reading this file. The
application is loaded in each worker after the fork (``preload_app = False``),
so every worker opens its own LMDB environment.
"""

worker_class = "sync"
preload_app = False
# Sync workers: one request at a time each, no keep-alive. A worker busy for
# longer than ``timeout`` seconds (a very large upload or download on a slow
# link) is restarted: raise it with GUNICORN_CMD_ARGS="--timeout 3600".
timeout = 600
graceful_timeout = 30
# Large uploads are streamed to the binary store: no request body limit here
# (max_body_size in the Lakesuperior configuration applies).
limit_request_line = 8190
accesslog = "-"
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'
errorlog = "-"
loglevel = "info"
