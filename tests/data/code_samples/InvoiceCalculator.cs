using System;

namespace Shop.Billing
{
    /// <summary>Computes invoice totals.</summary>
    public class InvoiceCalculator : ICalculator
    {
        private readonly decimal _rate;

        /// <summary>Creates a calculator with a tax rate.</summary>
        public InvoiceCalculator(decimal rate) { _rate = rate; }

        /// <summary>The total with tax.</summary>
        [Obsolete("use TotalAsync")]
        public decimal Total(decimal net)
        {
            return net * (1 + _rate);
        }

        public decimal Rate => _rate;
    }

    public interface ICalculator { decimal Total(decimal net); }
    public struct Money { public decimal Amount; }
    public record Line(string Sku, int Qty);
}
