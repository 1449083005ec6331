// Package geo has shapes.
package geo

import "math"

// Circle is a round shape.
type Circle struct {
	Radius float64
}

// Area returns the circle's area.
func (c *Circle) Area() float64 {
	return math.Pi * c.Radius * c.Radius
}

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// Unit makes a unit circle.
func Unit() Circle {
	return Circle{Radius: 1}
}
