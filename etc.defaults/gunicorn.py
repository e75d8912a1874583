"""Gunicorn settings for lsup-server.

``bind``, ``workers`` and ``threads`` come from the Lakesuperior configuration
(``server.bind`` / ``LSUP_SERVER_BIND`` / ``--bind``, ``server.workers``,
``server.threads``): lsup-server sets them after reading this file. The
application is loaded in each worker after the fork (``preload_app = False``),
so every worker opens its own LMDB environment.
"""
import sys

# Threaded workers (gunicorn's gthread) whose event loop reads request headers
# (lakesuperior/worker.py): a request gets a thread once its header is complete,
# so clients sending headers slowly hold no thread (server.header_timeout bounds
# them), and a slow body or a slow reader of a response holds one for at most
# server.body_timeout between two bytes. The repository is thread-safe: reads run
# concurrently on their own snapshots, writes take the repository's lock.
worker_class = "lakesuperior.worker.HeaderReadingWorker"
# Connections one worker holds at once (slow ones included); more wait in the
# listen backlog.
worker_connections = 1000
preload_app = False
#: Seconds a worker thread may hold the GIL while another waits for it (Python's
#: default is 0.005). A write holds the store's single write lock, which the
#: threads of every worker wait for; when the writing thread gives up the GIL
#: (for a system call such as fsync), a thread parsing the next request may keep
#: it for the whole interval while the lock stays held. A shorter interval gives
#: it back sooner: 8 concurrent PUT clients, 2 workers x 8 threads, 2 cores:
#: about +25% PUT/s, GET/s unchanged (docs/performance.md).
GIL_SWITCH_INTERVAL = 0.0005


def post_worker_init(worker):
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)


# No request header names the WSGI script root or path: gunicorn's default takes
# SCRIPT_NAME and PATH_INFO headers from forwarded_allow_ips (127.0.0.1, where any
# local client connects), and a SCRIPT_NAME the path does not start with was a 500.
# Headers with underscores are then dropped (header_map "drop").
forwarder_headers = ""
keepalive = 5
# A worker whose main loop is stuck for longer than ``timeout`` seconds is
# restarted; threaded workers stay responsive during long transfers, so this
# does not limit upload or download time.
timeout = 120
graceful_timeout = 30
# Large uploads are streamed to the binary store: no request body limit here
# (max_body_size in the Lakesuperior configuration applies).
limit_request_line = 8190
# No control socket: gunicorn's default (~/.gunicorn/gunicorn.ctl) would be
# shared by every instance of the same user. No pid file either; the worker
# heartbeat files are private, unlinked temporary files.
control_socket_disable = True
accesslog = "-"
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'
# Builds only the atoms the format uses (gunicorn's copies every header and the
# environ for each request); any other format gets gunicorn's own.
logger_class = "lakesuperior.server.AccessLogger"
errorlog = "-"
loglevel = "info"
