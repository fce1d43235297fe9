def op_negate(a):
    return -a
