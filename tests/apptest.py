"""AppTest helper: open a page of the app the way a browser does (the frame first, then the page)."""
from streamlit.testing.v1 import AppTest

APP = "../app.py"  # AppTest paths are relative to the file that calls from_file (this one)


def page(name: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    at.switch_page(f"app_pages/{name}.py")
    return at.run()
