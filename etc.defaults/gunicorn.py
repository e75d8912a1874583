"""Gunicorn settings for lsup-server. Values come from the Lakesuperior config
(LSUP_CONFIG / LSUP_* variables); the app is loaded in each worker after the
fork, so every worker opens its own LMDB environment."""
from lakesuperior.config import Config

_config = Config.load()

bind = _config.server_bind
workers = _config.server_workers
worker_class = "sync"
preload_app = False
timeout = 120
graceful_timeout = 30
accesslog = "-"
errorlog = "-"
loglevel = "info"
