// Copyright Example Games. All Rights Reserved.

#include "Inventory/InventoryComponent.h"
#include "Net/UnrealNetwork.h"

#include UE_INLINE_GENERATED_CPP_BY_NAME(InventoryComponent)

DEFINE_LOG_CATEGORY(LogInventory);

UInventoryComponent::UInventoryComponent(const FObjectInitializer& ObjectInitializer)
	: Super(ObjectInitializer)
{
	SetIsReplicatedByDefault(true);
}

void UInventoryComponent::BeginPlay()
{
	Super::BeginPlay();
	Slots.SetNum(MaxSlots);
}

int32 UInventoryComponent::AddItem(UInventoryItemDefinition* Item, int32 Count)
{
	for (int32 Index = 0; Index < Slots.Num() && Count > 0; ++Index)
	{
		FInventorySlot& Slot = Slots[Index];
		if (Slot.IsEmpty() || Slot.Item == Item)
		{
			Slot.Item = Item;
			Slot.Count += Count;
			Count = 0;
			OnInventoryChanged.Broadcast(this, Index);
		}
	}
	return Count;
}

bool UInventoryComponent::ServerDropItem_Validate(int32 SlotIndex)
{
	return Slots.IsValidIndex(SlotIndex);
}

void UInventoryComponent::ServerDropItem_Implementation(int32 SlotIndex)
{
	Slots[SlotIndex] = FInventorySlot();
	OnInventoryChanged.Broadcast(this, SlotIndex);
}

void UInventoryComponent::GetLifetimeReplicatedProps(TArray<FLifetimeProperty>& OutLifetimeProps) const
{
	Super::GetLifetimeReplicatedProps(OutLifetimeProps);
	DOREPLIFETIME(UInventoryComponent, Slots);
}
