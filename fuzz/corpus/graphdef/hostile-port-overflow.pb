
2
xPlaceholder*
dtype0*
shape
:
*
yRelux:99999999999999999999*
T0