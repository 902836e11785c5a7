"""The studio's app server: Streamlit's app (app.py) and the studio's own route that sets the signed access
cookie (ui/admit_route.py). `python -m ui.serve` (what ./run.sh does) runs `streamlit run studio_server.py`."""
import streamlit as st

from ui.admit_route import serve_routes

app = st.App("app.py", routes=serve_routes())
