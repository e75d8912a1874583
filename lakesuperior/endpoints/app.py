"""The Flask application factory."""
from __future__ import annotations

import os

from flask import Flask, jsonify

from lakesuperior.config import Config
from lakesuperior.store.quadstore import QuadStore


def create_app(config: Config | None = None) -> Flask:
    """Build the WSGI app; the store is opened here, in the serving process."""
    config = config or Config.load()
    app = Flask(__name__)
    os.makedirs(config.data_dir, exist_ok=True)
    store = QuadStore(config.store_dir, map_size=config.map_size, sync=config.sync,
                      index_batch=config.index_batch)
    app.extensions["lakesuperior"] = {"config": config, "store": store}

    @app.get("/")
    def status():
        stats = store.stats()
        return jsonify({"status": "up", "data_dir": os.path.abspath(config.data_dir),
                        "store": stats})

    return app
