"""Draw & predict: a digit drawn in the browser, preprocessed like MNIST, read by a trained network; kept in
"my handwriting" with the digit it is, to fine-tune the network on."""
import numpy as np
import plotly.graph_objects as go
import streamlit as st
from streamlit_drawable_canvas import st_canvas  # only here: it fails to import outside a Streamlit runtime

from core.app import model_service
from core.model.checkpoint_error import CheckpointError
from core.data.drawing import DrawingError, readings
from ui.canvas_toolbar import show_canvas_toolbar
from ui.charts import DIGITS, digit_axis
from ui.language import say, t
from ui.run_picker import pick_trained_run
from ui.inside import render_inside
from ui.present import for_room, on_phone, presenting
from ui.draw_target import drawing_target
from ui.export_view import LAST_DRAWING
from ui.class_round_view import class_banner, read_with_the_rounds_model, send_to_class, teacher_round
from ui.handwriting_view import handwriting, keep_drawing
from ui.identity import current_person
from ui.session import get_store

st.title("✏️ " + t("nav.draw"))
store = get_store()
# In presentation mode the class round comes first, above the model's choice: the mosaic on the first screen.
round_slot = st.container() if presenting() else None
if not current_person().may("class_round"):
    read_with_the_rounds_model(store, "draw_run")  # a student's phone reads as the class round does
run, checkpoint = pick_trained_run(t("draw.model"), key="draw_run")
target = drawing_target()  # from Evaluate's "Draw one like this"
with round_slot or st.container():
    # the teacher's panel (open a round, the class's mosaic, teach it their handwriting), else a round's ask and
    # your drawings in it
    if not (current_person().may("class_round") and teacher_round(store, run)):
        class_banner(store)
# a phone stacks the columns below each other: its reading goes above the canvas, where a finger is drawing
reading = st.container() if on_phone() else None

left, mid, right = st.columns([3, 2, 3])
with left:
    width = st.slider(t("draw.stroke_width"), 8, 40, 22, key="stroke")
    # Cleared in the browser by the canvas's own 🗑 (reset): a Clear button here replaced the canvas on the
    # next rerun, and a stroke begun before that rerun landed (~0.3 s, longer under training load) was lost.
    st.caption(t("draw.clear_hint"))
    canvas = st_canvas(stroke_width=width, stroke_color="#FFFFFF", background_color="#000000", height=280,
                       width=280, drawing_mode="freedraw", update_streamlit=True, return_image_data=True,
                       key="canvas")
    show_canvas_toolbar()
    shifts = st.toggle(t("draw.shifts"), key="draw_shifts", help=t("draw.shifts_help"))
digit: np.ndarray | None
try:
    views = readings(canvas.image_data if canvas is not None else None)
    digit = views[0]  # the evened one: what the page shows, keeps and sends to the class
except DrawingError as e:
    (reading or mid).info(say(e))  # on a phone in the reading's place: the canvas does not move when it comes
    digit = None
if digit is not None:
    st.session_state[LAST_DRAWING] = digit  # Runs' export check reads it too
    with mid:
        st.caption(t("draw.network_sees") + (t("draw.seen_shifted") if shifts else ""))
        st.image(list(views), width=84, caption=[t("draw.seen_evened"), t("draw.seen_as_drawn")])
    try:
        probs = model_service.read_drawing(checkpoint, views, shifts=shifts)
    except CheckpointError as e:
        st.error(say(e))
        st.stop()
    best = int(np.argmax(probs))
    with right:
        (reading or st).markdown("### " + t("draw.prediction", digit=best, p=probs[best]))
        if target is not None:
            (st.success if best == target.digit else st.warning)(
                t("draw.target_right" if best == target.digit else "draw.target_wrong", digit=target.digit, read=best))
        fig = go.Figure(go.Bar(x=DIGITS, y=probs,
                               marker_color=["#2f80ed" if i == best else "#7f8c8d" for i in range(10)]))
        fig.update_layout(height=260, yaxis=dict(range=[0, 1], title=t("draw.probability")),
                          xaxis=digit_axis(t("draw.digit")), margin=dict(l=10, r=10, t=10, b=10))
        st.plotly_chart(for_room(fig), width="stretch", key="probs", config={"displayModeBar": False})
        with reading or st.container():  # on a phone above the canvas, beside the reading
            in_round = send_to_class(store, digit)  # in a class round, drawings go to the class
        if not in_round:
            keep_drawing(store, run, digit, best, target)

    # A toggle, not an expander: an expander's body runs on every stroke even when closed, and this view
    # (activations, saliency, filters) is the heaviest part of the page (bench/load_test.py).
    if st.toggle("🔬 " + t("draw.inside"), key="inside_draw"):
        render_inside(checkpoint, digit, key="draw")

handwriting(store, run)
