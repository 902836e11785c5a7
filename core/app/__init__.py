"""What the dashboard process needs from core besides pages: the locked MindSpore service, comparing
runs, access rules. No Streamlit here."""
