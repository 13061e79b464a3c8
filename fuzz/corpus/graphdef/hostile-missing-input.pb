
2
xPlaceholder*
dtype0*
shape
:

yRelu	nothere:0*
T0