"""HTTP front door: the Flask application and the pure header logic it uses."""
