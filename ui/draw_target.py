"""The digit Draw asks for when it was opened from an Evaluate image ("Draw one like this")."""
from __future__ import annotations

import streamlit as st

from ui.confusion import DRAW_TARGET, DrawTarget
from ui.language import t

__all__ = ["drawing_target"]


def drawing_target() -> DrawTarget | None:
    """Show the digit to draw and its example image, with a way to stop asking; the target, if any."""
    target: DrawTarget | None = st.session_state.get(DRAW_TARGET)
    if target is None:
        return None
    with st.container(border=True, horizontal=True, vertical_alignment="center"):
        if target.image is not None:
            st.image(target.image, width=84)
        example = (" " + t("draw.target_example", id=target.sample_id, read=target.read_as)
                   if target.read_as is not None else "")
        st.markdown(t("draw.target", digit=target.digit) + example)
        if st.button("✖️ " + t("draw.target_clear"), key="clear_target"):
            del st.session_state[DRAW_TARGET]
            st.rerun()
    return target
