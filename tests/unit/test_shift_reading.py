"""Reading an image with its four 1-pixel shifts (core/model/shift_reading.py): the views, their average, and a
checkpoint evaluated that way by the command line."""
import re
import subprocess
import sys

import numpy as np

from core import PROJECT_ROOT
from core.app import model_service
from core.data.folders import load_arrays, validate_mnist_dir
from core.model import checkpoint
from core.model.evaluation import evaluate_shifted, predict
from core.model.shift_reading import SHIFTS, averaged_probabilities, shifted


def rolled(images: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """The same move made another way: np.roll, then the rows and columns that wrapped around blanked."""
    out = np.roll(images, (dy, dx), axis=(1, 2))
    if dy:
        (out[:, :dy] if dy > 0 else out[:, dy:])[...] = 0
    if dx:
        (out[:, :, :dx] if dx > 0 else out[:, :, dx:])[...] = 0
    return out


def test_a_shift_moves_every_pixel_one_place_and_blanks_what_comes_in_from_the_edge(rng):
    images = rng.integers(1, 256, size=(3, 28, 28), dtype=np.uint8)  # no zeros: a blank pixel is one moved in
    assert np.array_equal(shifted(images, 0, 0), images)
    for dy, dx in SHIFTS[1:]:
        moved = shifted(images, dy, dx)
        assert moved.dtype == np.uint8 and np.array_equal(moved, rolled(images, dy, dx)), (dy, dx)
        assert (moved == 0).sum() == 3 * 28, (dy, dx)  # one row or column of each image
    dot = np.zeros((1, 28, 28), np.uint8)
    dot[0, 10, 10] = 255
    assert shifted(dot, 1, 0)[0, 11, 10] == 255 and shifted(dot, 0, -1)[0, 10, 9] == 255


def test_the_reading_is_the_mean_of_the_five_views():
    """A reader that sees only pixel (14, 14): a dot one pixel off it is read in the one view of five that puts
    it back, so the averaged probability is 1/5 for "lit" where one plain reading gives 0."""
    def reader(views):
        lit = (views[:, 14, 14] > 0).astype(np.float64)
        return np.stack([1 - lit, lit], axis=1)

    dot = np.zeros((1, 28, 28), np.uint8)
    dot[0, 13, 14] = 255  # one row above the pixel the reader sees: the view shifted one row down puts it there
    assert reader(dot)[0, 1] == 0.0
    assert np.allclose(averaged_probabilities(reader, dot), [[0.8, 0.2]])


def test_a_checkpoint_evaluated_with_shifts_averages_its_five_readings(trained_ckpt, small_mnist):
    model = checkpoint.load(trained_ckpt)
    folder = validate_mnist_dir(small_mnist)
    r = evaluate_shifted(model.net, folder, "test", model.config.val_fraction)
    images, labels = load_arrays(folder, "test")
    by_hand = np.mean([predict(model.net, rolled(images, dy, dx)) for dy, dx in SHIFTS], axis=0)
    assert np.allclose(r.probabilities, by_hand, atol=1e-5)
    assert r.accuracy == float((by_hand.argmax(1) == labels).mean())
    assert np.isclose(r.loss, -np.log(by_hand[np.arange(len(labels)), labels]).mean(), atol=1e-4)
    assert r.confusion.sum() == len(labels) == 500


def test_the_command_line_evaluates_with_shifts(trained_ckpt, small_mnist):
    model = checkpoint.load(trained_ckpt)
    expected = evaluate_shifted(model.net, validate_mnist_dir(small_mnist), "test", model.config.val_fraction)
    p = subprocess.run([sys.executable, "-m", "core.cli.evaluate", str(trained_ckpt), "--data-dir",
                        str(small_mnist), "--shifts"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "(test, 500 images, each with its four 1-pixel shifts)" in p.stdout, p.stdout
    said = float(re.search(r"accuracy ([\d.]+)", p.stdout).group(1))
    assert said == round(expected.accuracy, 4), p.stdout


def test_a_drawing_read_with_shifts_averages_ten_readings_of_its_two_views(trained_ckpt, small_mnist):
    """The Draw page's reading (model_service.read_drawing): its two views, each with its four shifts or alone."""
    images, _ = load_arrays(validate_mnist_dir(small_mnist), "test")
    views = images[:2]  # two views of one drawing, as core.data.drawing.readings gives them
    plain = model_service.read_drawing(str(trained_ckpt), views)
    assert np.allclose(plain, model_service.predict(str(trained_ckpt), views).mean(axis=0))
    ten = [model_service.predict(str(trained_ckpt), rolled(views, dy, dx)) for dy, dx in SHIFTS]
    shifted_reading = model_service.read_drawing(str(trained_ckpt), views, shifts=True)
    assert shifted_reading.shape == (10,) and np.isclose(shifted_reading.sum(), 1.0, atol=1e-5)
    assert np.allclose(shifted_reading, np.mean(ten, axis=0).mean(axis=0), atol=1e-6)
    assert not np.allclose(shifted_reading, plain, atol=1e-4)  # the shifts change what it reads
