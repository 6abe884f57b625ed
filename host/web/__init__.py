"""The floor page: the host's web application (``egm host serve --web``; docs/floor-web.md)."""
