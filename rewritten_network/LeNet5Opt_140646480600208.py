import sys
import mindspore
from mindspore import nn
from mindspore.nn import Cell
from mindspore.ops import functional as F
#
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')
from mindspore.nn.cell import Cell
from mindspore.nn.layer.conv import _Conv

class _ConvOpt(_Conv, Cell):

    def __init__(self):
        Cell.__init__(self)
        for key, value in _Conv.__dict__.items():
            if not key.startswith('__'):
                setattr(_ConvOpt, key, value)
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')
from mindspore.nn.layer.pooling import _PoolNd

class _PoolNdOpt(_PoolNd, Cell):

    def __init__(self):
        Cell.__init__(self)
        for key, value in _PoolNd.__dict__.items():
            if not key.startswith('__'):
                setattr(_PoolNdOpt, key, value)
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/ops/operations/manually_defined')
from mindspore.ops._primitive_cache import _get_cache_prim
from mindspore.ops.operations.manually_defined.ops_def import Rank

def rank_opt(input_x):
    _get_cache_prim_var = _get_cache_prim(Rank)
    rank_op = _get_cache_prim_var()
    rank_op_var = rank_op(input_x)
    return rank_op_var
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')
from mindspore import ops
from mindspore.nn.layer.basic import Dense
from mindspore.train.amp import amp_cast

class DenseOpt_2(Dense, Cell):

    def __init__(self, obj):
        Cell.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def construct(self, x):
        x_var = amp_cast(x, mindspore.float16)
        x_shape = self.shape_op(x_var)
        x_shape = amp_cast(x_shape, mindspore.float32)
        len_var_1 = len(x_shape)
        compare_var_1 = len_var_1 != 2
        if compare_var_1:
            subscript_var = x_shape[-1]
            usub_var = -1
            tuple_var = (usub_var, subscript_var)
            x_var_4 = amp_cast(x, mindspore.float16)
            tuple_var = amp_cast(tuple_var, mindspore.float16)
            x = self.reshape(x_var_4, tuple_var)
            x = amp_cast(x, mindspore.float32)
        x_var_1 = amp_cast(x, mindspore.float16)
        weight_var = amp_cast(self.weight, mindspore.float16)
        x = self.matmul(x_var_1, weight_var)
        x = amp_cast(x, mindspore.float32)
        if self.has_bias:
            x_var_3 = amp_cast(x, mindspore.float16)
            bias_var = amp_cast(self.bias, mindspore.float16)
            x = self.bias_add(x_var_3, bias_var)
            x = amp_cast(x, mindspore.float32)
        if self.activation_flag:
            x = self.activation(x)
        len_var = len(x_shape)
        compare_var = len_var != 2
        if compare_var:
            subscript_var_2 = ops.shape(x)[-1]
            tuple_var_1 = (subscript_var_2,)
            subscript_var_1 = x_shape[:-1]
            out_shape = subscript_var_1 + tuple_var_1
            x_var_2 = amp_cast(x, mindspore.float16)
            out_shape = amp_cast(out_shape, mindspore.float16)
            x = self.reshape(x_var_2, out_shape)
            x = amp_cast(x, mindspore.float32)
        return x

    def extend_repr(self):
        s = f'input_channels={self.in_channels}, output_channels={self.out_channels}'
        if self.has_bias:
            s += f', has_bias={self.has_bias}'
        if self.activation_flag:
            s += f', activation={self.activation}'
        return s
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')
from mindspore.nn.layer.activation import ReLU

class ReLUOpt_3(ReLU, Cell):

    def __init__(self, obj):
        Cell.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def construct(self, input):
        input = amp_cast(input, mindspore.float16)
        relu_var = self.relu(input)
        relu_var = amp_cast(relu_var, mindspore.float32)
        return relu_var
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')

class DenseOpt_1(Dense, Cell):

    def __init__(self, obj):
        Cell.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def construct(self, x):
        x_var = amp_cast(x, mindspore.float16)
        x_shape = self.shape_op(x_var)
        x_shape = amp_cast(x_shape, mindspore.float32)
        len_var_1 = len(x_shape)
        compare_var_1 = len_var_1 != 2
        if compare_var_1:
            subscript_var = x_shape[-1]
            usub_var = -1
            tuple_var = (usub_var, subscript_var)
            x_var_4 = amp_cast(x, mindspore.float16)
            tuple_var = amp_cast(tuple_var, mindspore.float16)
            x = self.reshape(x_var_4, tuple_var)
            x = amp_cast(x, mindspore.float32)
        x_var_1 = amp_cast(x, mindspore.float16)
        weight_var = amp_cast(self.weight, mindspore.float16)
        x = self.matmul(x_var_1, weight_var)
        x = amp_cast(x, mindspore.float32)
        if self.has_bias:
            x_var_3 = amp_cast(x, mindspore.float16)
            bias_var = amp_cast(self.bias, mindspore.float16)
            x = self.bias_add(x_var_3, bias_var)
            x = amp_cast(x, mindspore.float32)
        if self.activation_flag:
            x = self.activation(x)
        len_var = len(x_shape)
        compare_var = len_var != 2
        if compare_var:
            subscript_var_2 = ops.shape(x)[-1]
            tuple_var_1 = (subscript_var_2,)
            subscript_var_1 = x_shape[:-1]
            out_shape = subscript_var_1 + tuple_var_1
            x_var_2 = amp_cast(x, mindspore.float16)
            out_shape = amp_cast(out_shape, mindspore.float16)
            x = self.reshape(x_var_2, out_shape)
            x = amp_cast(x, mindspore.float32)
        return x

    def extend_repr(self):
        s = f'input_channels={self.in_channels}, output_channels={self.out_channels}'
        if self.has_bias:
            s += f', has_bias={self.has_bias}'
        if self.activation_flag:
            s += f', activation={self.activation}'
        return s
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')

class ReLUOpt_2(ReLU, Cell):

    def __init__(self, obj):
        Cell.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def construct(self, input):
        input = amp_cast(input, mindspore.float16)
        relu_var = self.relu(input)
        relu_var = amp_cast(relu_var, mindspore.float32)
        return relu_var
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')

class DenseOpt(Dense, Cell):

    def __init__(self, obj):
        Cell.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def construct(self, x):
        x_var = amp_cast(x, mindspore.float16)
        x_shape = self.shape_op(x_var)
        x_shape = amp_cast(x_shape, mindspore.float32)
        len_var_1 = len(x_shape)
        compare_var_1 = len_var_1 != 2
        if compare_var_1:
            subscript_var = x_shape[-1]
            usub_var = -1
            tuple_var = (usub_var, subscript_var)
            x_var_4 = amp_cast(x, mindspore.float16)
            tuple_var = amp_cast(tuple_var, mindspore.float16)
            x = self.reshape(x_var_4, tuple_var)
            x = amp_cast(x, mindspore.float32)
        x_var_1 = amp_cast(x, mindspore.float16)
        weight_var = amp_cast(self.weight, mindspore.float16)
        x = self.matmul(x_var_1, weight_var)
        x = amp_cast(x, mindspore.float32)
        if self.has_bias:
            x_var_3 = amp_cast(x, mindspore.float16)
            bias_var = amp_cast(self.bias, mindspore.float16)
            x = self.bias_add(x_var_3, bias_var)
            x = amp_cast(x, mindspore.float32)
        if self.activation_flag:
            x = self.activation(x)
        len_var = len(x_shape)
        compare_var = len_var != 2
        if compare_var:
            subscript_var_2 = ops.shape(x)[-1]
            tuple_var_1 = (subscript_var_2,)
            subscript_var_1 = x_shape[:-1]
            out_shape = subscript_var_1 + tuple_var_1
            x_var_2 = amp_cast(x, mindspore.float16)
            out_shape = amp_cast(out_shape, mindspore.float16)
            x = self.reshape(x_var_2, out_shape)
            x = amp_cast(x, mindspore.float32)
        return x

    def extend_repr(self):
        s = f'input_channels={self.in_channels}, output_channels={self.out_channels}'
        if self.has_bias:
            s += f', has_bias={self.has_bias}'
        if self.activation_flag:
            s += f', activation={self.activation}'
        return s
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')
from mindspore.nn.layer.basic import Flatten

class FlattenOpt(Flatten, Cell):

    def __init__(self, obj):
        Cell.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def check_axis_valid(self, axis, ndim):
        """Check if axis is within valid range for given ndim."""
        if axis < -ndim or axis >= ndim:
            raise ValueError("'start_dim' or 'end_dim' out of range.")

    def construct(self, x):
        x_rank = rank_opt(x)
        ndim = x_rank if x_rank != 0 else 1
        self.check_axis_valid(self.start_dim, ndim)
        self.check_axis_valid(self.end_dim, ndim)
        flatten_var = ops.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)
        return flatten_var
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')

class ReLUOpt_1(ReLU, Cell):

    def __init__(self, obj):
        Cell.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def construct(self, input):
        input = amp_cast(input, mindspore.float16)
        relu_var = self.relu(input)
        relu_var = amp_cast(relu_var, mindspore.float32)
        return relu_var
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')
from mindspore.nn.layer.conv import Conv2d

class Conv2dOpt_1(Conv2d, _ConvOpt):

    def __init__(self, obj):
        _ConvOpt.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def construct(self, x):
        x = amp_cast(x, mindspore.float16)
        weight_var = amp_cast(self.weight, mindspore.float16)
        output = self.conv2d(x, weight_var)
        output = amp_cast(output, mindspore.float32)
        if self.has_bias:
            output_var = amp_cast(output, mindspore.float16)
            bias_var = amp_cast(self.bias, mindspore.float16)
            output = self.bias_add(output_var, bias_var)
            output = amp_cast(output, mindspore.float32)
        return output
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')
from mindspore.nn.layer.pooling import MaxPool2d

class MaxPool2dOpt(MaxPool2d, _PoolNdOpt):

    def __init__(self, obj):
        _PoolNdOpt.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def construct(self, x):
        expand_batch = False
        compare_var = x.ndim == 3
        if compare_var:
            x = x.unsqueeze(0)
            expand_batch = True
        if self.use_pad:
            x = x.unsqueeze(2)
            out = self.max_pool(x)
            isinstance_var = isinstance(out, tuple)
            if isinstance_var:
                subscript_var_1 = out[1]
                squeeze_var_1 = subscript_var_1.squeeze(2)
                subscript_var = out[0]
                squeeze_var = subscript_var.squeeze(2)
                out = (squeeze_var, squeeze_var_1)
            else:
                out = out.squeeze(2)
        else:
            out = self.max_pool(x)
        if expand_batch:
            isinstance_var_1 = isinstance(out, tuple)
            if isinstance_var_1:
                subscript_var_3 = out[1]
                squeeze_var_3 = subscript_var_3.squeeze(0)
                subscript_var_2 = out[0]
                squeeze_var_2 = subscript_var_2.squeeze(0)
                out = (squeeze_var_2, squeeze_var_3)
            else:
                out = out.squeeze(0)
        and_var = self.use_pad and (not self.return_indices)
        if and_var:
            subscript_var_4 = out[0]
            return subscript_var_4
        return out
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')

class ReLUOpt(ReLU, Cell):

    def __init__(self, obj):
        Cell.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def construct(self, input):
        input = amp_cast(input, mindspore.float16)
        relu_var = self.relu(input)
        relu_var = amp_cast(relu_var, mindspore.float32)
        return relu_var
#
sys.path.insert(0, '/work/main/.venv/lib/python3.11/site-packages/mindspore/nn/layer')

class Conv2dOpt(Conv2d, _ConvOpt):

    def __init__(self, obj):
        _ConvOpt.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)

    def construct(self, x):
        x = amp_cast(x, mindspore.float16)
        weight_var = amp_cast(self.weight, mindspore.float16)
        output = self.conv2d(x, weight_var)
        output = amp_cast(output, mindspore.float32)
        if self.has_bias:
            output_var = amp_cast(output, mindspore.float16)
            bias_var = amp_cast(self.bias, mindspore.float16)
            output = self.bias_add(output_var, bias_var)
            output = amp_cast(output, mindspore.float32)
        return output
#
sys.path.insert(0, '/work/main/core')
import mindspore.nn as nn
from core.networks import LeNet5

class LeNet5Opt(LeNet5, nn.Cell):

    def __init__(self, obj):
        nn.Cell.__init__(self)
        for key, value in obj.__dict__.items():
            setattr(self, key, value)
        self.features[0] = Conv2dOpt(self.features[0])
        self.features[1] = ReLUOpt(self.features[1])
        self.features[2] = MaxPool2dOpt(self.features[2])
        self.features[3] = Conv2dOpt_1(self.features[3])
        self.features[4] = ReLUOpt_1(self.features[4])
        self.features[5] = MaxPool2dOpt(self.features[5])
        self.classifier[0] = FlattenOpt(self.classifier[0])
        self.classifier[1] = DenseOpt(self.classifier[1])
        self.classifier[2] = ReLUOpt_2(self.classifier[2])
        self.classifier[3] = DenseOpt_1(self.classifier[3])
        self.classifier[4] = ReLUOpt_3(self.classifier[4])
        self.classifier[5] = DenseOpt_2(self.classifier[5])

    def construct(self, x):
        features_var = self.features(x)
        classifier_var = self.classifier(features_var)
        return classifier_var
#