def op_add(a, b):
    return a + b
