"""AppTest helpers: open a page of the app the way a browser does (the frame first, then the page), and
read an element's Markdown as the user sees it."""
import re

from streamlit.testing.v1 import AppTest

APP = "../../app.py"  # AppTest paths are relative to the file that calls from_file (this one)


def seen(markdown: str) -> str:
    """Markdown as it reads on screen: backslash escapes (how the app shows user text literally) resolved."""
    return re.sub(r"\\(.)", r"\1", markdown)


def page(name: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    at.switch_page(f"app_pages/{name}.py")
    return at.run()
