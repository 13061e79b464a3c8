
2
xPlaceholder*
dtype0*
shape
:

yAddV2^xx*
T0