"""Streamlit helpers shared by the pages in app_pages/: language, navigation, session state, the gate,
formatting, live views and forms."""
